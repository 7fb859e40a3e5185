"""The three jobs of the comparing room, one call each: ``evalset compare`` (:func:`make_comparisons`: the
comparisons and their verdicts), ``evalset explain`` (:func:`explain_runs`: why each query moved, no test) and
``evalset holes`` (:func:`compare_with_holes`: the comparisons with the unjudged documents of their top k, the range
of each difference over extreme fills of them, and the pool folder that settles them), with their printed forms."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from evalset.comparing.compare import Comparisons, compare_runs
from evalset.comparing.many import ManyComparisons, compare_many
from evalset.comparing.movement import TOLERANCE, QueryMovements, query_movements
from evalset.comparing.spec import EXPLAIN_RULES, CompareSpec
from evalset.errors import InputError
from evalset.evaluation import Evaluation, missing_notes, missing_queries, per_query_values, unusual_grades_note
from evalset.holes.comparison import ComparisonBounds, comparison_bounds
from evalset.holes.pool import HolesPool, format_holes, holes_pool
from evalset.io.trec import expand_run_paths, read_run
from evalset.params import settings_of, validate_params
from evalset.pooling import write_pool


@dataclass(frozen=True)
class ComparisonsWithHoles:
    """The comparisons, each one's holes, and the holes' pool (``evalset holes``)."""

    comparisons: Comparisons
    holes: list[ComparisonBounds]
    pool: HolesPool

    def write(self, *, replace: bool = False) -> list[str]:
        """Write the holes' pool folder (nothing when there is none; an existing non-empty folder is refused unless
        ``replace``, :func:`~evalset.pooling.write_pool`); returns the paths written."""
        if self.pool.build is None:
            return []
        return write_pool(self.pool.build, self.pool.folder, replace=replace)

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON of ``holes``: one object per comparison, with its ``holes`` and their pool."""
        return [result.to_dict() | {"holes": bound.to_dict() | {"pool": self.pool.to_dict()}}
                for result, bound in zip(self.comparisons.results, self.holes, strict=True)]

    @property
    def notes(self) -> list[str]:
        """The comparisons' notes (missing queries, unusual grades)."""
        return self.comparisons.notes

    def to_text(self) -> str:
        """The comparisons as ``compare`` prints them, then the holes and their pool."""
        return "\n\n".join([self.comparisons.to_text(), format_holes(self.holes, self.pool)])


def compare_with_holes(evaluation: Evaluation, runs: Sequence[str | os.PathLike], folder: str | os.PathLike, *,
               spec: CompareSpec | None = None, corpus: str | os.PathLike | None = None,
               **options: Any) -> ComparisonsWithHoles:
    """``evalset holes``: ``runs`` (files or folders, the first the baseline) compared as ``spec`` (or the
    :class:`~evalset.comparing.spec.CompareSpec` of ``options``) asks, each comparison's holes in the top k bounded,
    and their pool folder ``folder`` made (with ``corpus`` and the spec's queries, its tasks; the judging order
    seeded by the spec's seed). Writes nothing: :meth:`ComparisonsWithHoles.write`."""
    spec = settings_of(CompareSpec, spec, options)
    if spec.many:
        raise InputError("the holes are a baseline's and its candidates': give no --all or --baseline")
    run_files = expand_run_paths(runs)
    read = {name: read_run(path) for name, path in run_files.items()}  # the top k is read: each file once, whole
    comparisons = compare_runs(evaluation, read, spec=spec, bound_holes=True)
    values, results = comparisons.per_query, comparisons.results
    holes = [bound if bound is not None else comparison_bounds(values, read, result, spec.depth,
                                                              comparisons.weights(result))
             for bound, result in zip(comparisons.holes or [None] * len(results), results, strict=True)]
    pool = holes_pool(values.evaluation, read, run_files, holes, folder, queries=spec.strata, corpus=corpus,
                      seed=spec.seed)
    return ComparisonsWithHoles(comparisons, holes, pool)


class _Pair(NamedTuple):
    """What :func:`~evalset.comparing.query_movements` reads of a comparison: its runs and its metric."""

    baseline: str
    candidate: str
    metric: str


@dataclass(frozen=True)
class Explanations:
    """What ``evalset explain`` finds: each candidate's per-query movements against the baseline, and notes."""

    movements: list[QueryMovements]
    notes: list[str]

    def to_text(self) -> str:
        """Each comparison's movements, as ``explain`` prints them."""
        return "\n\n".join(movement.to_text() for movement in self.movements)

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON of ``explain``: one object per candidate, its runs and metric beside its movements."""
        return [{"baseline": m.baseline, "candidate": m.candidate, "metric": m.metric, **m.to_dict()}
                for m in self.movements]


@validate_params(EXPLAIN_RULES)
def explain_runs(evaluation: Evaluation, runs: Sequence[str | os.PathLike] | Mapping[str, pd.DataFrame], *,
                 metric: str | None = None, depth: int | None = None,
                 queries: str | os.PathLike | pd.DataFrame | None = None, epsilon: float | None = None,
                 top: int | None = None) -> Explanations:
    """``evalset explain``: why each query of the first run (the baseline) against each other one moved on
    ``metric`` (default: the headline), in the top ``depth`` (default: its cutoff), as
    :func:`~evalset.comparing.query_movements` classifies it (``queries``: their texts; ``epsilon``, None:
    :data:`~evalset.comparing.movement.TOLERANCE`; ``top``: the queries the text shows). No test is made and,
    on a set, nothing logged: an explanation is no comparison. A judged query a run lacks follows the contract's
    ``missing`` (:func:`evalset.evaluation.missing_queries`)."""
    named = runs if isinstance(runs, Mapping) else expand_run_paths(runs)
    read = {name: run if isinstance(run, pd.DataFrame) else read_run(run) for name, run in named.items()}
    metric = metric or evaluation.headline
    values = per_query_values(evaluation, read, [metric])
    lacking = missing_queries(values, named)
    baseline, *candidates = values.runs
    if not candidates:
        raise InputError(f"no candidate run to explain against the baseline {baseline}")
    movements = [query_movements(values, read, _Pair(baseline, candidate, metric), depth, queries=queries,
                                 epsilon=TOLERANCE if epsilon is None else epsilon, top=top)
                 for candidate in candidates]
    note = unusual_grades_note(evaluation)
    return Explanations(movements, [*missing_notes(values, lacking, "left out of its movements"),
                                    *([note] if note else [])])


def make_comparisons(evaluation: Evaluation, runs: Sequence[str | os.PathLike], spec: CompareSpec
                     ) -> Comparisons | ManyComparisons:
    """``evalset compare``: ``runs`` (files or folders; the first is the baseline unless ``spec`` compares many
    systems at once) compared as ``spec`` asks."""
    run_files = expand_run_paths(runs)
    if spec.many:
        return compare_many(evaluation, run_files, spec=spec)
    return compare_runs(evaluation, run_files, spec=spec)
