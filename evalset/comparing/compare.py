"""Comparing runs: the first run (the baseline) against each other one on one metric, in the comparison family
(:mod:`evalset.stats.family`: planned or exploratory, the Bonferroni threshold, on a set the comparison log), from
the per-query values of the evaluation room."""

from __future__ import annotations

from dataclasses import dataclass

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.evaluation import Evaluation, PerQuery, per_query_values
from evalset.evaluation.values import Runs
from evalset.stats.family import ComparisonFamily
from evalset.stats.paired import Comparison


@dataclass(frozen=True)
class Comparisons:
    """The comparisons of a baseline with each candidate, and the per-query values they rest on."""

    results: list[Comparison]
    per_query: PerQuery

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation

    def to_text(self) -> str:
        """The comparisons one after the other, and the contract overridden, if it was."""
        text = "\n\n".join(result.to_text() for result in self.results)
        overridden = self.evaluation.overridden
        return text + ("\nCONTRACT OVERRIDDEN: " + ", ".join(overridden) if overridden else "")


def compare_runs(evaluation: Evaluation, runs: Runs, metric: str | None = None, *, planned: int | None = None,
                 exploratory: bool = False, alpha: float = 0.05, permutations: int = 9999,
                 seed: int = DEFAULT_SEED, stream: bool | None = None) -> Comparisons:
    """Compare the first run (the baseline) with each other one on ``metric`` (default: the headline).

    The comparisons form one :class:`~evalset.stats.family.ComparisonFamily` (the others asked for, the set's
    planned list and its log on the split; ``planned`` overrides the planned count); on a set each comparison is
    appended to the set's comparison log as it is made.
    """
    metric = metric or evaluation.headline
    values = per_query_values(evaluation, runs, [metric], stream=stream)
    baseline, *candidates = values.runs
    if not candidates:
        raise InputError(f"no candidate run to compare with the baseline {baseline}")
    family = ComparisonFamily.of(len(candidates), planned=planned, frozen=evaluation.frozen, split=evaluation.split)
    results = [family.compare(values.column(baseline, metric), values.column(name, metric), baseline_name=baseline,
                              candidate_name=name, metric=metric, exploratory=exploratory, alpha=alpha,
                              permutations=permutations, seed=seed) for name in candidates]
    return Comparisons(results, values)

