"""What ``evalset compare --why`` and ``--holes`` add to the comparisons: the movements and holes of each, the
holes' pool folder, and their printed forms (JSON: each comparison's object gains ``movement`` and ``holes``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalset.comparing.compare import Comparisons, compare_runs
from evalset.comparing.holes import ComparisonHoles, HolesPool, comparison_holes, format_holes, holes_pool
from evalset.comparing.many import ManyComparisons, compare_many
from evalset.comparing.movement import TOLERANCE, QueryMovements, query_movements
from evalset.comparing.spec import CompareSpec
from evalset.contract import DEFAULT_SEED
from evalset.evaluation import Evaluation, unusual_grades_note
from evalset.io.queries import read_queries
from evalset.io.trec import expand_run_paths, read_run
from evalset.pooling import write_pool


@dataclass(frozen=True)
class ExplainedComparisons:
    """The comparisons, and (when asked) each one's movements, each one's holes, and the holes' pool."""

    comparisons: Comparisons
    movements: list[QueryMovements] | None = None
    holes: list[ComparisonHoles] | None = None
    pool: HolesPool | None = None

    def write(self, *, replace: bool = False) -> list[str]:
        """Write the holes' pool folder (nothing when there is none; an existing non-empty folder is refused unless
        ``replace``, :func:`~evalset.pooling.write_pool`); returns the paths written."""
        if self.pool is None or self.pool.build is None:
            return []
        return write_pool(self.pool.build, self.pool.folder, replace=replace)

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON of ``compare``: one object per comparison, with ``movement`` and ``holes`` when asked."""
        documents = []
        for index, result in enumerate(self.comparisons.results):
            document = result.to_dict()
            if self.movements is not None:
                document["movement"] = self.movements[index].to_dict()
            bound = (self.holes or self.comparisons.holes or [None] * (index + 1))[index]
            if bound is not None:
                document["holes"] = bound.to_dict() | ({"pool": self.pool.to_dict()} if self.pool else {})
            documents.append(document)
        return documents

    @property
    def notes(self) -> list[str]:
        """The comparisons' notes (missing queries), and the note on unusual grades in the judgments, if any."""
        note = unusual_grades_note(self.comparisons.evaluation)
        return [*self.comparisons.notes, *([note] if note else [])]

    def to_text(self) -> str:
        """The comparisons as ``compare`` prints them, then the movements, then the holes and their pool."""
        parts = [self.comparisons.to_text()]
        parts += [m.to_text() for m in self.movements or ()]
        if self.holes is not None:
            parts.append(format_holes(self.holes, self.pool))
        return "\n\n".join(parts)


def explain_comparisons(comparisons: Comparisons, run_files: Mapping[str, str | os.PathLike], *,
                        runs: Mapping[str, pd.DataFrame] | None = None, why: bool = False,
                        holes_folder: str | os.PathLike | None = None, depth: int | None = None,
                        queries: str | None = None, corpus: str | None = None,
                        seed: int = DEFAULT_SEED, epsilon: float | None = None,
                        top: int | None = None) -> ExplainedComparisons:
    """Classify each comparison's queries (``why``) and find its holes and their pool (``holes_folder``; with
    ``queries`` and ``corpus`` the pool has tasks; ``seed`` is its judging order's). ``run_files`` are the runs
    compared, ``runs`` the same read whole (read here when not given; only ``why`` and ``holes_folder`` need their
    top k). ``queries`` also gives ``why`` its query texts; ``epsilon`` (None: :data:`TOLERANCE`) and ``top`` are
    :func:`evalset.comparing.query_movements`'s. Writes nothing."""
    if not why and holes_folder is None:
        return ExplainedComparisons(comparisons)
    if runs is None:
        runs = {name: read_run(path) for name, path in run_files.items()}
    values, results = comparisons.per_query, comparisons.results
    movements = None
    if why:
        texts = read_queries(queries) if queries is not None else None
        movements = [query_movements(values, runs, result, depth, queries=texts,
                                     epsilon=TOLERANCE if epsilon is None else epsilon, top=top)
                     for result in results]
    if holes_folder is None:
        return ExplainedComparisons(comparisons, movements)
    holes = [bound if bound is not None else comparison_holes(values, runs, result, depth, comparisons.weights(result))
             for bound, result in zip(comparisons.holes or [None] * len(results), results, strict=True)]
    # with why, the query texts alone are for the movements; the pool's tasks need the corpus too
    tasks_queries = queries if corpus is not None or not why else None
    pool = holes_pool(values.evaluation, runs, run_files, holes, holes_folder, queries=tasks_queries, corpus=corpus,
                      seed=seed)
    return ExplainedComparisons(comparisons, movements, holes, pool)


def make_comparisons(evaluation: Evaluation, runs: Sequence[str | os.PathLike], spec: CompareSpec
            ) -> ExplainedComparisons | ManyComparisons:
    """``evalset compare``: ``runs`` (files or folders; the first is the baseline unless ``spec`` compares many
    systems at once) compared as ``spec`` asks, with what ``--why`` and ``--holes`` add (the pool is not written:
    :meth:`ExplainedComparisons.write`)."""
    run_files = expand_run_paths(runs)
    if spec.many:
        return compare_many(evaluation, run_files, spec=spec)
    # --why and --holes read the runs' top k: each file is then read once, whole; else big files stream
    read = {name: read_run(path) for name, path in run_files.items()} if spec.reads_top_k else None
    comparisons = compare_runs(evaluation, read or run_files, spec=spec,
                               bound_holes=True if spec.holes is not None else None)
    return explain_comparisons(comparisons, run_files, runs=read, why=spec.why, holes_folder=spec.holes,
                               depth=spec.depth, queries=spec.strata, corpus=spec.corpus, seed=spec.seed,
                               epsilon=spec.epsilon, top=spec.top)
