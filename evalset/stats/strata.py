"""Means of per-query values: over the defined queries, per stratum, across strata, and their bootstrap interval;
column means with Student's t interval.

Conventions
-----------
- A mean is over the queries where the value is defined (not NaN); ``defined`` and ``undefined`` count them. A
  mean over no defined query is NaN (``null`` in JSON, ``undef`` when printed).
- Across strata (a frozen set's ``queries`` with ``query_id, stratum, stratum_share``): ``traffic`` weighting is the
  sum over strata of (traffic share x stratum mean), the shares renormalised over the strata that have a defined
  value (the others are listed in ``strata_without_value``); ``uniform`` is the plain mean over every query.
- **The t interval of column means** (:func:`t_intervals`): each column of a complete matrix (queries x columns,
  no NaN) has its mean and ``mean -/+ t_{(1+level)/2, n-1} * sd / sqrt(n)`` (sd with ddof 1, n the queries);
  a column without spread has the interval (mean, mean); fewer than 2 queries give a NaN interval.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.render import json_safe
from evalset.seeds import generator

INTERVAL_METHODS = {"bca": "BCa", "percentile": "percentile"}
"""The bootstrap intervals offered (name -> ``scipy.stats.bootstrap``'s method)."""


def t_intervals(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's mean of ``values`` (queries x columns, complete) and its two-sided Student's t interval at
    ``level``: ``(means, lows, highs)`` (module docstring)."""
    from scipy import stats  # slow to import: imported where used

    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise InputError(f"t_intervals needs a matrix of queries x columns, got {values.ndim} dimension(s)")
    n = values.shape[0]
    means = values.mean(axis=0) if n else np.full(values.shape[1], np.nan)
    if n < 2:
        return means, np.full_like(means, np.nan), np.full_like(means, np.nan)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * values.std(axis=0, ddof=1) / math.sqrt(n)
    return means, means - half, means + half


@dataclass(frozen=True)
class MeanSummary:
    """The mean over the defined queries, and how many are defined and undefined."""

    mean: float
    defined: int
    undefined: int

    def to_dict(self) -> dict[str, Any]:
        """``{"mean", "defined", "undefined"}``, JSON-ready (an undefined mean is None)."""
        return json_safe({"mean": self.mean, "defined": self.defined, "undefined": self.undefined})


@dataclass(frozen=True)
class StratumMean(MeanSummary):
    """The mean of one stratum, with its traffic share."""

    share: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "share": self.share}


@dataclass(frozen=True)
class StratifiedSummary(MeanSummary):
    """The mean over every query, the mean of each stratum, and the weighted mean across strata."""

    strata: dict[str, StratumMean] = field(default_factory=dict)
    weighted_mean: float = math.nan
    weighting: str = "traffic"
    strata_without_value: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The layout of ``evalset score --set --format json`` (a documented contract)."""
        return {**super().to_dict(), "strata": {name: s.to_dict() for name, s in self.strata.items()},
                "weighted_mean": json_safe(self.weighted_mean), "weighting": self.weighting,
                "strata_without_value": list(self.strata_without_value)}


GEOMETRIC_FLOOR = 0.00001
"""The least value a geometric summary takes a query's value as (trec_eval's MIN_GEO_MEAN: gm_map, gm_bpref)."""


def on_summary_scale(values: pd.Series, rule: str = "mean") -> pd.Series:
    """``values`` on the scale whose arithmetic mean gives their summary under ``rule``: themselves, or for
    ``geometric`` log(max(v, GEOMETRIC_FLOOR)) (undefined values stay undefined)."""
    if rule != "geometric":
        return values
    return np.log(np.maximum(values, GEOMETRIC_FLOOR))


def from_summary_scale(value: float, rule: str = "mean") -> float:
    """A mean on :func:`on_summary_scale`'s scale as the summary itself: exp of it for ``geometric``."""
    return float(np.exp(value)) if rule == "geometric" else value


def _mean(values: pd.Series, rule: str = "mean") -> float:
    """The summary of the defined ``values`` under ``rule`` (:attr:`evalset.metrics.MeasureKind.summary`): their
    mean, or ``geometric``: exp(mean(log(max(v, GEOMETRIC_FLOOR)))), trec_eval's geometric mean (gm_map)."""
    if not values.notna().any():
        return math.nan
    if rule == "geometric":
        logs = np.log(np.maximum(values.dropna().to_numpy(float), GEOMETRIC_FLOOR))
        return float(np.exp(sum(logs.tolist()) / len(logs)))  # added in query order, as trec_eval adds them
    return float(values.mean())


def mean_summary(values: pd.Series, rule: str = "mean") -> MeanSummary:
    """The mean of ``values`` over the defined ones (under ``rule``: :func:`_mean`)."""
    return MeanSummary(_mean(values, rule), int(values.notna().sum()), int(values.isna().sum()))


def stratified_summary(per_query: pd.Series, queries: pd.DataFrame, weighting: str = "traffic",
                       rule: str = "mean") -> StratifiedSummary:
    """Mean over defined queries overall and per stratum, and the weighted mean across strata (module docstring).

    ``per_query`` is indexed by query id; only the queries in ``queries`` count.
    """
    frame = queries.set_index("query_id")[["stratum", "stratum_share"]].join(per_query.rename("value"), how="inner")
    strata = {}
    for stratum, group in frame.groupby("stratum", sort=True):
        values = group["value"]
        strata[stratum] = StratumMean(_mean(values, rule), int(values.notna().sum()), int(values.isna().sum()),
                                      float(group["stratum_share"].iloc[0]))
    defined = {s: v for s, v in strata.items() if not math.isnan(v.mean)}
    if weighting == "uniform" or not defined:
        weighted = _mean(frame["value"], rule)
    else:
        total = sum(v.share for v in defined.values())
        weighted = sum(v.share * v.mean for v in defined.values()) / total if total > 0 else math.nan
    return StratifiedSummary(_mean(frame["value"], rule), int(frame["value"].notna().sum()),
                             int(frame["value"].isna().sum()), strata, weighted, weighting,
                             sorted(set(strata) - set(defined)))


def score_interval(per_query: pd.Series, queries: pd.DataFrame, weighting: str = "traffic", *,
                   level: float = 0.95, resamples: int = 9999, rng: np.random.Generator | None = None,
                   method: str = "bca") -> tuple[float, float, float]:
    """The set's mean of one run's per-query values (or of two runs' per-query differences) with a bootstrap
    interval over queries (``method``: ``bca`` or ``percentile``, :data:`INTERVAL_METHODS`).

    Undefined (NaN) values are left out. Queries are resampled within their stratum and the strata combined
    as :func:`stratified_summary` does for ``weighting`` (traffic: shares renormalised over the strata with a
    defined value; uniform: one sample, the plain mean). Returns ``(estimate, low, high)``; all NaN when no
    value is defined; a degenerate interval (low = high = estimate) when every resample would be equal (all
    values equal within each stratum). A stratum with a single query enters as a constant (BCa's jackknife
    needs two).
    """
    from scipy import stats  # slow to import: imported where used

    rng = rng if rng is not None else generator(DEFAULT_SEED)
    estimate = stratified_summary(per_query, queries, weighting).weighted_mean
    if math.isnan(estimate):
        return math.nan, math.nan, math.nan
    frame = queries.set_index("query_id")[["stratum", "stratum_share"]].join(per_query.rename("value"), how="inner")
    frame = frame.dropna(subset=["value"])
    if weighting == "uniform":
        samples, shares = [frame["value"].to_numpy(float)], np.array([1.0])
    else:
        groups = [group for _, group in frame.groupby("stratum", sort=True)]
        samples = [g["value"].to_numpy(float) for g in groups]
        shares = np.array([g["stratum_share"].iloc[0] for g in groups], dtype=float)
        shares = shares / shares.sum()
    if all(len(s) < 2 or np.all(s == s[0]) for s in samples):
        return float(estimate), float(estimate), float(estimate)

    def weighted_mean(*resampled: np.ndarray, axis: int = -1) -> np.ndarray:
        return sum(share * np.mean(sample, axis=axis) for share, sample in zip(shares, resampled, strict=True))

    varying = [i for i, s in enumerate(samples) if len(s) > 1]
    fixed = sum(shares[i] * samples[i].mean() for i in range(len(samples)) if i not in varying)
    shares, samples = shares[varying], [samples[i] for i in varying]
    with warnings.catch_warnings():  # a degenerate resample gives NaN ends, which the verdict calls undefined
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(tuple(samples), weighted_mean, confidence_level=level, n_resamples=resamples,
                                 method=INTERVAL_METHODS[method], rng=rng, vectorized=True)
    low, high = result.confidence_interval
    return float(estimate), float(low + fixed), float(high + fixed)


def query_weights(index: pd.Index, queries: pd.DataFrame) -> pd.Series:
    """Each query's weight in the traffic-weighted mean over the queries of ``index``: its stratum's share
    (renormalised over the strata present) divided by the stratum's number of queries there; the weights sum to 1.
    A query of ``index`` without a stratum in ``queries`` is an error."""
    strata = queries.assign(query_id=queries["query_id"].astype(str)).set_index("query_id")
    frame = strata.reindex(pd.Index(index.astype(str)))[["stratum", "stratum_share"]]
    if frame["stratum"].isna().any():
        missing = list(frame.index[frame["stratum"].isna()][:3])
        raise InputError(f"queries without a stratum in the strata given: {', '.join(missing)}")
    shares = frame.groupby("stratum", sort=True)["stratum_share"].first().astype(float)
    if not shares.sum() > 0:
        raise InputError("the traffic shares of the strata sum to 0: no traffic-weighted mean")
    shares = shares / shares.sum()
    sizes = frame.groupby("stratum", sort=True).size()
    weights = frame["stratum"].map(shares / sizes).astype(float)
    return pd.Series(weights.to_numpy(), index=index)


def has_strata(queries: pd.DataFrame | None) -> bool:
    """Whether ``queries`` carries two strata or more and their traffic shares (``stratum``, ``stratum_share``, all
    given)."""
    return (queries is not None and {"stratum", "stratum_share"} <= set(queries.columns)
            and queries["stratum"].notna().all() and queries["stratum"].nunique() > 1
            and pd.to_numeric(queries["stratum_share"], errors="coerce").notna().all())
