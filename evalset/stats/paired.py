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
- Beside it: the paired t-test (``scipy.stats.ttest_1samp`` of the differences, equal to ``ttest_rel``), a bootstrap
  interval of the mean difference (``scipy.stats.bootstrap``, BCa by default or percentile, level 1 - threshold,
  drawn from the same generator after the test's flips) and the effect size (mean difference / standard deviation
  of the differences, ddof 1).
- **Strata.** Given strata with traffic shares, each stratum's mean difference comes with its interval, and so does
  the traffic-weighted difference: sum over queries of w_q d_q with w_q = share_s / n_s (shares renormalised over
  the strata present, :func:`evalset.stats.strata.query_weights`). Its test flips signs query by query (so within
  strata) and takes the weighted mean as the statistic: the one permutation implementation on n w_q d_q. Its
  interval resamples within strata (:func:`evalset.stats.strata.score_interval`); its t is the stratified one
  (variance sum of W_s^2 var_s / n_s, Welch-Satterthwaite's degrees of freedom). The effect size is the
  weighted mean over the weighted standard deviation (reliability weights: the plain sd, ddof 1, when uniform).
  A stratum of one query has no interval of its own, and a traffic-weighted headline resting on one gives no
  verdict. Strata *disagree* only when one's interval lies above 0 and another's below. The headline is on the
  declared weighting (``traffic`` or ``uniform``); the other weighting is reported beside it.
- **The tests' agreement.** When the permutation test, the t-test and the interval (excluding 0 or not) disagree
  at the threshold, ``tests_disagree`` says which, and a likely why (skewed differences, few queries, a p near
  the threshold).
- **The verdict** is :func:`evalset.stats.verdicts.decide`'s, on the evidence gathered here (the primary test's p,
  the interval, the queries and, traffic-weighted, each stratum's, the sign flips and resamples, the kind and the
  split): a difference is *established* only when the comparison was planned, its primary test's p is below the
  threshold ``alpha / planned`` (the family's Bonferroni count, see :mod:`evalset.stats.family`) and its interval
  excludes 0.
- **Order.** The queries are taken in the order of their ids (as strings), so that the order of the input lines
  or of the Series changes no sign flip and no resample.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalset.contract import BOOTSTRAP_INTERVALS, DEFAULT_METRIC, DEFAULT_SEED, NO_CHANGE, PRIMARY_TESTS
from evalset.errors import InputError
from evalset.params import POSITIVE_INT, PROBABILITY, check
from evalset.render import is_undefined, json_safe
from evalset.seeds import generator
from evalset.stats.resampling import (
    FLIP_CHUNK,
    bootstrap_interval,
    orientation,
    permutation_p_value,
    permutation_p_values,
)
from evalset.stats.strata import INTERVAL_METHODS, query_weights, score_interval
from evalset.stats.verdicts import ESTABLISHED, Evidence, comparison_kind, decide

__all__ = ["DEFAULT_SEED", "FLIP_CHUNK", "Comparison", "bootstrap_interval", "compare_paired", "permutation_p_value",
           "permutation_p_values"]

@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_paired`. Differences are candidate minus baseline.

    The headline figures (``mean_difference``, the tests, the interval, the verdict) are on ``weighting``:
    ``uniform`` (every query alike) or ``traffic`` (strata weighted by their traffic share). With strata,
    ``strata`` holds each stratum's difference and interval and ``other_weighting`` the figures under the other
    weighting. ``judged_at_k``, ``hole_bound`` and ``missing`` are what a comparison of runs adds
    (:func:`evalset.comparing.compare_runs`): both runs' judged@k, the bound of the holes, the judged queries a run
    lacked.
    """

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
    largest_gains: list[dict[str, Any]] = field(default_factory=list)
    means: dict[str, float] | None = None  # each run's mean over the compared queries, weighted as the headline
    ci_method: str = "bca"
    primary_test: str = "permutation"
    tests_disagree: str = ""
    weighting: str = "uniform"
    strata: list[dict[str, Any]] = field(default_factory=list)
    strata_disagree: str = ""
    other_weighting: dict[str, Any] | None = None
    split: str | None = None
    judged_at_k: dict[str, Any] | None = None
    first_stage: dict[str, Any] | None = None  # both runs' recall at their candidates' depth (comparing.compare)
    hole_bound: dict[str, Any] | None = None
    missing: dict[str, Any] | None = None
    evidence: Evidence | None = None
    rule: str = ""
    geometric_means: dict[str, float] | None = None  # a geometric measure's summaries; its values are logs
    family: str = ""  # the threshold's alpha / N, and where N comes from (evalset.stats.family)

    def decided(self, **evidence: Any) -> Comparison:
        """This comparison with its evidence changed (e.g. ``holes``) and its verdict decided again."""
        changed = replace(self.evidence, **evidence)
        verdict = decide(changed)
        return replace(self, evidence=changed, established=verdict.established, verdict=verdict.text,
                       rule=verdict.rule)

    def to_text(self) -> str:
        """The comparison as ``compare`` prints it (an undefined number reads ``undef``)."""
        from evalset.stats.comparisontext import comparison_text

        return comparison_text(self)

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
    interval: str = "bca",
    primary_test: str = "permutation",
    strata: pd.DataFrame | None = None,
    weighting: str = "uniform",
    split: str | None = None,
    interval_decides: bool = True,
    min_effect: float | None = None,
) -> Comparison:
    """Compare two systems' per-query scores (Series indexed by query id) on the queries both define.

    ``planned`` is the Bonferroni count of the family (the threshold is ``alpha / planned``) and ``exploratory``
    marks a comparison not planned beforehand; :meth:`evalset.stats.family.ComparisonFamily.compare` decides
    both by the family's rule and logs the comparison. Queries where either value is NaN (undefined) are left
    out and counted in ``undefined``; a query present in only one Series is an error, since the pairing would
    be silently partial.

    ``interval`` is the bootstrap interval (``bca``, ``percentile``); ``primary_test`` the test the verdict rests on
    (``permutation``, ``t``), and with ``interval_decides`` (the default) the interval must exclude 0 as well, else
    it describes the difference only; an established difference is read against ``min_effect``, the smallest gap
    worth the change (:mod:`evalset.stats.verdicts`). ``strata`` (``query_id, stratum, stratum_share``) adds each
    stratum's difference; with ``weighting="traffic"`` the headline is the traffic-weighted difference, tested by
    sign flips within strata of the weighted mean and bounded by a bootstrap within strata (module docstring). On
    the ``dev`` ``split`` a comparison is exploratory: the dev split is for tuning.
    """
    check("planned", planned, POSITIVE_INT)
    check("alpha", alpha, PROBABILITY)
    check("permutations", permutations, POSITIVE_INT)
    check("bootstrap_resamples", bootstrap_resamples, POSITIVE_INT)
    check("interval", interval, INTERVALS)
    check("primary_test", primary_test, PRIMARY_TESTS)
    check("weighting", weighting, WEIGHTING_CHOICES)
    if weighting == "traffic" and strata is None:
        raise InputError("a traffic-weighted comparison needs the strata and their traffic shares")
    if set(baseline.index) != set(candidate.index):
        only = sorted(set(baseline.index) ^ set(candidate.index))[:5]
        raise InputError(f"{baseline_name} and {candidate_name} are scored on different queries (e.g. {only})")
    paired = pd.DataFrame({"baseline": baseline, "candidate": candidate.reindex(baseline.index)})
    paired = paired.iloc[np.argsort(paired.index.astype(str).to_numpy(), kind="stable")]
    defined = paired.dropna()
    differences = (defined["candidate"] - defined["baseline"]).to_numpy(dtype=np.float64)
    threshold = alpha / planned
    rng = generator(seed)
    level = 1 - threshold
    uniform = _figures(differences, None, None, permutations, rng, level, bootstrap_resamples, interval)
    strata_rows, traffic = [], None
    if strata is not None:
        strata = strata.assign(query_id=strata["query_id"].astype(str),
                               stratum_share=strata["stratum_share"].astype(float)).sort_values("query_id")
        index = pd.Index(defined.index.astype(str))
        weights = query_weights(index, strata)
        traffic = _figures(differences, weights.to_numpy(), strata, permutations, rng, level, bootstrap_resamples,
                           interval, index)
        strata_rows = _strata_rows(pd.Series(differences, index=index), strata, level, bootstrap_resamples, rng,
                                   interval)
    headline, other = (traffic, uniform) if weighting == "traffic" else (uniform, traffic)
    kind = comparison_kind(exploratory, split)
    primary_p = headline["permutation_p"] if primary_test == "permutation" else headline["ttest_p"]
    evidence = Evidence(
        estimate=headline["mean_difference"], threshold=threshold, kind=kind, split=split, p=primary_p,
        test="p" if primary_test == "permutation" else "t-test p", low=headline["ci_low"], high=headline["ci_high"],
        interval=f"{INTERVAL_METHODS[interval]} interval", n=len(differences),
        strata={row["stratum"]: row["n"] for row in strata_rows} if weighting == "traffic" else {},
        permutations=permutations if primary_test == "permutation" else None, resamples=bootstrap_resamples,
        interval_decides=interval_decides, min_effect=min_effect)
    decision = decide(evidence)
    moved = defined.assign(difference=differences).sort_values("difference", kind="stable")
    losses = moved[moved["difference"] < -NO_CHANGE].head(largest)
    gains = moved[moved["difference"] > NO_CHANGE].sort_values("difference", ascending=False, kind="stable").head(
        largest)
    weights = query_weights(pd.Index(defined.index.astype(str)), strata).to_numpy() if (
        weighting == "traffic") else np.full(len(defined), 1 / len(defined)) if len(defined) else None
    return Comparison(
        baseline=baseline_name,
        candidate=candidate_name,
        metric=metric,
        n=len(differences),
        undefined=len(paired) - len(defined),
        mean_difference=headline["mean_difference"],
        median_difference=float(np.median(differences)) if len(differences) else math.nan,
        wins=int(np.sum(differences > NO_CHANGE)),
        losses=int(np.sum(differences < -NO_CHANGE)),
        ties=int(np.sum(np.abs(differences) <= NO_CHANGE)),
        permutation_p=headline["permutation_p"],
        permutations=permutations,
        t=headline["t"],
        ttest_p=headline["ttest_p"],
        ci_low=headline["ci_low"],
        ci_high=headline["ci_high"],
        ci_level=level,
        effect_size=headline["effect_size"],
        threshold=threshold,
        kind=kind,
        established=decision.established,
        verdict=decision.text,
        seed=seed,
        largest_losses=_rows(losses),
        largest_gains=_rows(gains),
        means=None if weights is None else {side: float(weights @ defined[side].to_numpy())
                                            for side in ("baseline", "candidate")},
        ci_method=interval,
        primary_test=primary_test,
        tests_disagree=_disagreement(headline, differences, threshold, primary_test, interval, interval_decides),
        weighting=weighting,
        strata=strata_rows,
        strata_disagree=_strata_disagreement(strata_rows),
        other_weighting=None if other is None else {"weighting": "uniform" if weighting == "traffic" else "traffic",
                                                     **other},
        split=split,
        evidence=evidence,
        rule=decision.rule,
    )


def _rows(moved: pd.DataFrame) -> list[dict[str, Any]]:
    return [{"query_id": str(query), "baseline": float(row.baseline), "candidate": float(row.candidate),
             "difference": float(row.difference)} for query, row in moved.iterrows()]


INTERVALS = BOOTSTRAP_INTERVALS
WEIGHTING_CHOICES = ("uniform", "traffic")


def _figures(differences: np.ndarray, weights: np.ndarray | None, strata: pd.DataFrame | None, permutations: int,
             rng: np.random.Generator, level: float, resamples: int, interval: str,
             index: pd.Index | None = None) -> dict[str, float]:
    """The mean difference, the permutation p, the t-test and the interval: plain (``weights`` None) or
    traffic-weighted (sign flips within strata of the weighted mean, a stratified t, a bootstrap within strata)."""
    from scipy import stats

    n = len(differences)
    if weights is None:
        mean = float(differences.mean()) if n else math.nan
        p = permutation_p_value(differences, permutations, rng)
        low, high = bootstrap_interval(differences, level, resamples, rng, interval)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = stats.ttest_1samp(differences, 0.0) if n > 1 else None
        t, t_p = (float(test.statistic), float(test.pvalue)) if test is not None else (math.nan, math.nan)
        return {"mean_difference": mean, "permutation_p": p, "t": t, "ttest_p": t_p, "ci_low": low, "ci_high": high,
                "effect_size": effect_size(differences, np.full(n, 1 / n) if n else np.array([]))}
    mean = float(weights @ differences)
    p = permutation_p_value(n * weights * differences, permutations, rng)
    sign = orientation(weights * differences)
    _, low, high = score_interval(pd.Series(sign * differences, index=index), strata, "traffic", level=level,
                                  resamples=resamples, rng=rng, method=interval)
    low, high = sorted((sign * low, sign * high))
    t, t_p = _stratified_t(differences, weights, strata.set_index("query_id")["stratum"].reindex(index).to_numpy())
    return {"mean_difference": mean, "permutation_p": p, "t": t, "ttest_p": t_p, "ci_low": low, "ci_high": high,
            "effect_size": effect_size(differences, weights)}


def effect_size(differences: np.ndarray, weights: np.ndarray) -> float:
    """The weighted mean difference over the weighted standard deviation of the differences (``weights`` sum to
    1; reliability weights, so that equal weights give the plain sd with ddof 1); NaN without spread."""
    if len(differences) < 2:
        return math.nan
    mean = float(weights @ differences)
    unbiased = 1 - float(weights @ weights)
    variance = float(weights @ (differences - mean) ** 2) / unbiased if unbiased > 0 else math.nan
    return mean / math.sqrt(variance) if variance > 0 else math.nan


def _stratified_t(differences: np.ndarray, weights: np.ndarray, strata: np.ndarray) -> tuple[float, float]:
    """The t statistic of the weighted mean: its variance sum over strata of a_s = W_s^2 var_s / n_s, with
    Welch-Satterthwaite's degrees of freedom (sum a_s)^2 / sum a_s^2 / (n_s - 1). Undefined (NaN) when a stratum
    holds one query (it has no variance) or no stratum varies."""
    from scipy import stats

    parts, freedoms = [], []
    for stratum in pd.unique(strata):
        inside = strata == stratum
        size, share = int(inside.sum()), float(weights[inside].sum())
        if size < 2:
            return math.nan, math.nan
        parts.append(share ** 2 * differences[inside].var(ddof=1) / size)
        freedoms.append(size - 1)
    variance = float(sum(parts))
    if not variance > 0:
        return math.nan, math.nan
    freedom = variance ** 2 / sum(part ** 2 / df for part, df in zip(parts, freedoms, strict=True))
    t = float(weights @ differences) / math.sqrt(variance)
    return t, float(2 * stats.t.sf(abs(t), freedom))


def _strata_rows(differences: pd.Series, strata: pd.DataFrame, level: float, resamples: int,
                 rng: np.random.Generator, interval: str) -> list[dict[str, Any]]:
    """Each stratum's mean difference and interval (none for a stratum of one query)."""
    frame = strata.set_index("query_id").reindex(differences.index).assign(difference=differences)
    rows = []
    for stratum, group in frame.groupby("stratum", sort=True):
        values = group["difference"].to_numpy(np.float64)
        low, high = bootstrap_interval(values, level, resamples, rng, interval) if len(values) > 1 else (
            math.nan, math.nan)
        rows.append({"stratum": str(stratum), "share": float(group["stratum_share"].iloc[0]), "n": len(values),
                     "mean_difference": float(values.mean()), "ci_low": low, "ci_high": high})
    return rows


def _strata_disagreement(rows: list[dict[str, Any]]) -> str:
    """The strata whose intervals lie on opposite sides of 0 (a sign alone, inside an interval holding 0, is
    noise)."""
    better = [r for r in rows if r["ci_low"] > 0]
    worse = [r for r in rows if r["ci_high"] < 0]
    if not better or not worse:
        return ""

    def named(group: list[dict[str, Any]]) -> str:
        return ", ".join(f"{r['stratum']} ({r['mean_difference']:+.4f})" for r in group)

    return (f"the strata disagree: candidate better on {named(better)}, worse on {named(worse)} (each interval "
            "excludes 0)")


def _disagreement(figures: dict[str, float], differences: np.ndarray, threshold: float, primary_test: str,
                  interval: str, interval_decides: bool = True) -> str:
    """Which of the permutation test, the t-test and the interval disagree at the threshold, and a likely why."""
    says = {"the permutation test": figures["permutation_p"] < threshold,
            "the paired t-test": figures["ttest_p"] < threshold,
            f"the {INTERVAL_METHODS[interval]} interval": not figures["ci_low"] <= 0 <= figures["ci_high"]}
    if is_undefined(figures["ttest_p"]) or len(set(says.values())) == 1:
        return ""
    yes = [name for name, significant in says.items() if significant]
    no = [name for name, significant in says.items() if not significant]
    from scipy import stats

    skew = float(stats.skew(differences, bias=False)) if len(differences) > 2 else math.nan
    if not is_undefined(skew) and abs(skew) >= 1:
        extreme = differences[np.argmax(np.abs(differences))]
        why = (f"the differences are skewed (skewness {skew:+.2f}, the most extreme {extreme:+.4f}), which strains the "
               "normal and bootstrap approximations; the permutation test needs only exchangeable signs")
    elif len(differences) < 20:
        why = f"few queries ({len(differences)}): the tests' approximations differ most there"
    else:
        why = "the evidence is near the threshold, where the tests' approximations differ"
    primary = "the permutation test" if primary_test == "permutation" else "the paired t-test"
    rule = (f"{primary}, the primary test, and the interval both exclude it" if interval_decides
            else f"{primary}, the primary test, excludes it (the interval describes)")
    return (f"{' and '.join(yes)} {'says' if len(yes) == 1 else 'say'} significant, {' and '.join(no)} "
            f"{'does' if len(no) == 1 else 'do'} not: {why}; a difference is {ESTABLISHED} only where {rule}")
