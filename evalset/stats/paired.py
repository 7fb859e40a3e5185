"""Paired comparisons of two systems over the same queries: the tests, the interval, the effect size, the verdict.

Conventions
-----------
- Differences are candidate minus baseline, per query, over the queries where both are defined; a query
  undefined (NaN) for either is left out and counted.
- The decision is a two-sided paired permutation test: under the null hypothesis the sign of each per-query
  difference is a coin flip, so the p-value is (1 + #{flips with |mean| >= |observed mean|}) / (1 + flips), with
  a fixed number of random sign flips drawn from a seeded numpy Generator (a flip mean within 1e-12 of the
  observed one counts as reaching it). :func:`permutation_p_values` is the one implementation: ``compare``,
  ``report`` and ``plan``'s power simulation (many resamples tested at once, sharing their flips) all use it.
  The flips are drawn in chunks of :data:`FLIP_CHUNK`; numpy draws int8 signs from 32-bit words and a chunk is a
  multiple of 4 flips, so the chunks are exactly the flips of one draw of them all.
- Beside it: the paired t-test (``scipy.stats.ttest_rel``), a BCa bootstrap interval of the mean difference
  (``scipy.stats.bootstrap``, level 1 - threshold, drawn from the same generator after the test's flips) and the
  effect size (mean difference / standard deviation of the differences, ddof 1).
- A difference is *established* only when the comparison was planned and its permutation p-value is below the
  threshold ``alpha / planned`` (the family's Bonferroni count, see :mod:`evalset.stats.family`); an exploratory
  comparison is never established, whatever its p.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_METRIC, DEFAULT_SEED
from evalset.errors import InputError
from evalset.params import POSITIVE_INT, PROBABILITY, check
from evalset.render import UNDEFINED, is_undefined, json_safe, number

__all__ = ["DEFAULT_SEED", "Comparison", "compare_paired", "permutation_p_value",
           "permutation_p_values"]

FLIP_CHUNK = 1000
"""Sign flips drawn at a time (a multiple of 4: see the module docstring)."""


def permutation_p_values(samples: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Two-sided paired permutation p-values of each row of ``samples`` (the rows share one set of sign flips).

    ``samples`` is one row of per-query differences, or a matrix of them (one row per resample, all of one
    length). A row of length 0 has p-value NaN (and no flip is drawn).
    """
    samples = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    rows, n = samples.shape
    if n == 0:
        return np.full(rows, np.nan)
    observed = np.abs(samples.mean(axis=1))
    tolerance = 1e-12 * np.maximum(1.0, observed)
    extreme = np.zeros(rows, dtype=np.int64)
    for start in range(0, permutations, FLIP_CHUNK):
        size = min(FLIP_CHUNK, permutations - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        means = (signs.astype(np.float64) @ samples.T) / n
        extreme += np.sum(np.abs(means) >= observed - tolerance, axis=0)
    return (extreme + 1) / (permutations + 1)


def permutation_p_value(differences: np.ndarray, permutations: int, rng: np.random.Generator) -> float:
    """The permutation p-value of one vector of per-query differences (see :func:`permutation_p_values`)."""
    return float(permutation_p_values(np.asarray(differences, dtype=np.float64)[None, :], permutations, rng)[0])


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

    def to_text(self) -> str:
        """The comparison as ``compare`` prints it (an undefined number reads ``undef``)."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (an undefined or infinite number becomes None)."""
        return json_safe(asdict(self))


def compare_paired(
    baseline: pd.Series,
    candidate: pd.Series,
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    metric: str = DEFAULT_METRIC,
    planned: int = 1,
    exploratory: bool = False,
    alpha: float = 0.05,
    permutations: int = 9999,
    bootstrap_resamples: int = 9999,
    seed: int = DEFAULT_SEED,
    largest: int = 5,
) -> Comparison:
    """Compare two systems' per-query scores (Series indexed by query id) on the queries both define.

    ``planned`` is the Bonferroni count of the family (the threshold is ``alpha / planned``) and ``exploratory``
    marks a comparison not planned beforehand; :meth:`evalset.stats.family.ComparisonFamily.compare` decides
    both by the family's rule and logs the comparison. Queries where either value is NaN (undefined) are left
    out and counted in ``undefined``; a query present in only one Series is an error, since the pairing would
    be silently partial.
    """
    check("planned", planned, POSITIVE_INT)
    check("alpha", alpha, PROBABILITY)
    check("permutations", permutations, POSITIVE_INT)
    if set(baseline.index) != set(candidate.index):
        only = sorted(set(baseline.index) ^ set(candidate.index))[:5]
        raise InputError(f"{baseline_name} and {candidate_name} are scored on different queries (e.g. {only})")
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


def _p(value: float) -> str:
    return UNDEFINED if is_undefined(value) else f"{value:.4g}"


def _verdict(kind: str, established: bool, mean: float, p: float, threshold: float) -> str:
    if kind == "exploratory":
        return f"exploratory (p = {_p(p)}): a lead for a planned comparison, never established"
    if established:
        direction = "better" if mean > 0 else "worse"
        return f"established: candidate {direction} (p = {_p(p)} < {threshold:.4g})"
    return f"not established (p = {_p(p)} >= {threshold:.4g})"


def _text(result: Comparison) -> str:
    lines = [
        f"{result.candidate} vs {result.baseline} on {result.metric} ({result.n} queries"
        + (f", {result.undefined} undefined left out" if result.undefined else "") + f", {result.kind})",
        f"  mean difference   {number(result.mean_difference, sign=True)}   "
        f"median {number(result.median_difference, sign=True)}",
        f"  wins/losses/ties  {result.wins}/{result.losses}/{result.ties}",
        f"  permutation p     {_p(result.permutation_p)}  ({result.permutations} sign flips, seed {result.seed})",
        f"  paired t          t = {number(result.t)}, p = {_p(result.ttest_p)}",
        f"  BCa {result.ci_level:.1%} CI     [{number(result.ci_low, sign=True)}, {number(result.ci_high, sign=True)}]",
        f"  effect size       {number(result.effect_size, 3)} (mean / sd of differences)",
        f"  verdict           {result.verdict}",
    ]
    if result.largest_losses:
        lines.append("  largest losses    " + ", ".join(
            f"{loss['query_id']} ({loss['difference']:+.4f})" for loss in result.largest_losses))
    return "\n".join(lines)
