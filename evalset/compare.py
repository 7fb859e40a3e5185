"""Paired comparisons of two systems over the same queries, and the verdict.

The decision is a two-sided paired permutation test: under the null hypothesis the sign of each per-query
difference is a coin flip, so the p-value is (1 + #{flips with |mean| >= |observed mean|}) / (1 + flips),
with a fixed number of random sign flips drawn from a seeded numpy Generator. The paired t-test
(``scipy.stats.ttest_rel``) and a BCa bootstrap interval of the mean difference (``scipy.stats.bootstrap``)
are reported beside it, with the effect size (mean difference / standard deviation of the differences, ddof 1).

A difference is *established* only when the comparison was planned and its permutation p-value is below the
Bonferroni threshold ``alpha / planned``; an exploratory comparison is never established, whatever its p.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED

__all__ = ["DEFAULT_SEED", "Comparison", "compare_paired", "permutation_p_value"]


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_paired`. Differences are candidate minus baseline."""

    baseline: str
    candidate: str
    metric: str
    n: int
    undefined: int
    mean_difference: float
    median_difference: float
    wins: int
    losses: int
    ties: int
    permutation_p: float
    permutations: int
    t: float
    ttest_p: float
    ci_low: float
    ci_high: float
    ci_level: float
    effect_size: float
    threshold: float
    kind: Literal["planned", "exploratory"]
    established: bool
    verdict: str
    seed: int
    largest_losses: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes None)."""
        return {key: _json_value(value) for key, value in asdict(self).items()}


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return [{k: _json_value(v) for k, v in item.items()} for item in value]
    return value


def permutation_p_value(differences: np.ndarray, permutations: int, rng: np.random.Generator,
                        chunk: int = 1000) -> float:
    """Two-sided paired permutation test by random sign flips of the per-query differences."""
    differences = np.asarray(differences, dtype=np.float64)
    if len(differences) == 0:
        return math.nan
    observed = abs(differences.mean())
    tolerance = 1e-12 * max(1.0, observed)
    extreme = 0
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = rng.integers(0, 2, size=(size, len(differences)), dtype=np.int8) * 2 - 1
        means = (signs @ differences) / len(differences)
        extreme += int(np.sum(np.abs(means) >= observed - tolerance))
    return (extreme + 1) / (permutations + 1)


def _bca_interval(differences: np.ndarray, level: float, resamples: int,
                  rng: np.random.Generator) -> tuple[float, float]:
    from scipy import stats  # slow to import (1 s): imported where used, so that the CLI starts fast

    if len(differences) < 2 or np.all(differences == differences[0]):
        value = float(differences[0]) if len(differences) else math.nan
        return value, value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap((differences,), np.mean, confidence_level=level, n_resamples=resamples,
                                 method="BCa", random_state=rng, vectorized=True, batch=500)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def compare_paired(
    baseline: pd.Series,
    candidate: pd.Series,
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    metric: str = "ndcg@10",
    planned: int = 1,
    exploratory: bool = False,
    alpha: float = 0.05,
    permutations: int = 9999,
    bootstrap_resamples: int = 9999,
    seed: int = DEFAULT_SEED,
    largest: int = 5,
) -> Comparison:
    """Compare two systems' per-query scores (Series indexed by query id) on the queries both define.

    Queries where either value is NaN (undefined) are left out and counted in ``undefined``; a query present
    in only one Series is an error, since the pairing would be silently partial.
    """
    if planned < 1:
        raise ValueError(f"planned must be at least 1, got {planned}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if set(baseline.index) != set(candidate.index):
        only = sorted(set(baseline.index) ^ set(candidate.index))[:5]
        raise ValueError(f"{baseline_name} and {candidate_name} are scored on different queries (e.g. {only})")
    paired = pd.DataFrame({"baseline": baseline, "candidate": candidate.reindex(baseline.index)})
    defined = paired.dropna()
    differences = (defined["candidate"] - defined["baseline"]).to_numpy(dtype=np.float64)
    threshold = alpha / planned
    rng = np.random.default_rng(seed)
    permutation_p = permutation_p_value(differences, permutations, rng)
    ci_low, ci_high = _bca_interval(differences, 1 - threshold, bootstrap_resamples, rng)
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = stats.ttest_rel(defined["candidate"], defined["baseline"]) if len(differences) > 1 else None
    sd = differences.std(ddof=1) if len(differences) > 1 else math.nan
    mean = float(differences.mean()) if len(differences) else math.nan
    kind = "exploratory" if exploratory else "planned"
    established = kind == "planned" and permutation_p < threshold
    losses = defined.assign(difference=differences).sort_values("difference", kind="stable")
    losses = losses[losses["difference"] < 0].head(largest)
    return Comparison(
        baseline=baseline_name,
        candidate=candidate_name,
        metric=metric,
        n=len(differences),
        undefined=len(paired) - len(defined),
        mean_difference=mean,
        median_difference=float(np.median(differences)) if len(differences) else math.nan,
        wins=int(np.sum(differences > 0)),
        losses=int(np.sum(differences < 0)),
        ties=int(np.sum(differences == 0)),
        permutation_p=permutation_p,
        permutations=permutations,
        t=float(test.statistic) if test is not None else math.nan,
        ttest_p=float(test.pvalue) if test is not None else math.nan,
        ci_low=ci_low,
        ci_high=ci_high,
        ci_level=1 - threshold,
        effect_size=mean / sd if sd and sd > 0 else math.nan,
        threshold=threshold,
        kind=kind,
        established=established,
        verdict=_verdict(kind, established, mean, permutation_p, threshold),
        seed=seed,
        largest_losses=[
            {"query_id": str(query), "baseline": float(row.baseline), "candidate": float(row.candidate),
             "difference": float(row.difference)}
            for query, row in losses.iterrows()
        ],
    )


def _verdict(kind: str, established: bool, mean: float, p: float, threshold: float) -> str:
    if kind == "exploratory":
        return f"exploratory (p = {p:.4g}): a lead for a planned comparison, never established"
    if established:
        direction = "better" if mean > 0 else "worse"
        return f"established: candidate {direction} (p = {p:.4g} < {threshold:.4g})"
    return f"not established (p = {p:.4g} >= {threshold:.4g})"
