"""Prediction-powered means (PPI++) of per-query values, beside the classical mean of the human slice alone.

The units are queries. Humans grade every pair of a random slice of ``n`` queries (the labelled set, values
``Y``); an LLM grades every pair of every query (values ``Ŷ`` on the slice, ``Ŷ_u`` on the ``N`` other queries,
the unlabelled set). The PPI++ estimate of the mean (Angelopoulos, Duchi & Zrnic 2023) is
``mean(λ Ŷ_u) + mean(Y - λ Ŷ)``, unbiased for any ``λ``; ``λ`` is tuned from the data to minimise the variance
(clipped to [0, 1]; 0 is the classical mean, 1 plain PPI). The estimate, ``λ`` and the normal interval come from
``ppi_py`` (ppi-python, the method's reference implementation): :func:`ppi_py.ppi_mean_pointestimate` and
:func:`ppi_py.ppi_mean_ci` with ``lam_optim_mode="element"``, one ``λ`` per column (per run, or per pair of runs
for differences), exactly as a separate call per column would give.

Conventions
-----------
- ``interval="t"`` (the default): the centre and standard error of ppi_py's interval (the standard error is its
  half-width over the normal quantile) with Student's t quantile on ``n - 1`` degrees of freedom. ppi_py's
  normal interval under-covers on small slices (about 0.90-0.94 at nominal 0.95 with 10 queries on TREC DL
  2019); the t quantile measured 0.94-0.96 there. ``interval="normal"`` is ppi_py's interval as it is.
- The human-only interval is the classical one on the slice: its mean, the standard error ``s / sqrt(n)``
  (``s`` with ddof 1), and the same quantile (t on ``n - 1`` degrees of freedom, or normal).
- ``effective_n``: the number of human-graded queries whose classical mean would have the PPI++ standard error,
  ``var(Y) / se²`` (variance with ddof 0, as ppi_py's standard error uses): what the LLM grades were worth.
- A column whose LLM values are all equal (labelled and unlabelled together) carries no information: ``λ`` is
  0 there (ppi_py would divide by a zero variance), so the estimate is the classical one.
- Strata (:func:`combine_strata`): the traffic-weighted estimate is ``sum(w_h est_h)`` with the shares ``w_h``
  renormalised to 1, its standard error ``sqrt(sum(w_h² se_h²))``; with the t quantile its degrees of freedom
  are Welch-Satterthwaite's, ``(sum w_h² se_h²)² / sum((w_h² se_h²)² / (n_h - 1))``.
- Bounded measures (``bounds``, the range ``[a, b]`` of a measure's values, width ``w = b - a``): a slice whose
  values tie (at a bound, as ``rr`` and ``p@10`` near the ceiling do) shows too little spread, and its interval
  shrinks to a point that misses the truth. So the per-query variance is floored (:func:`variance_floor`):
  the slice counts as Laplace's rule of succession would count a 0/1 measure, with one pseudo-query at each end of
  the range, ``q = (n (mean - a) / w + 1) / (n + 2)``, and its variance is at least ``w² q (1 - q) / (n + 2)``
  (about ``(w / (n + 2))²`` at a bound; a fraction of a typical spread in the middle of the range). The human-only
  standard error is ``sqrt(max(s², floor) / n)``; the PPI++ one at least ``sqrt(floor / n)`` (the labelled,
  rectifier part of its variance is at least the floor); the floor's mean is the column's estimate; the point
  estimates are unchanged. A paired difference (``difference=True``, values in
  ``[-w, w]``) has no floor from the range (two runs may agree closely on every query), except when its slice
  values tie exactly (both runs at a bound, say): then a single measure's floor at its bound. Then
  every interval is clipped to the range (``[a, b]``, or ``[-w, w]`` for a difference); the tables say which
  were (``clipped``) and which slices were degenerate (``degenerate``: every value equal).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np
import pandas as pd

from evalset.errors import InputError

INTERVALS = ("t", "normal")
COLUMNS_AT_ONCE = 64
"""Columns per ppi_py call: its λ costs O(d²) in the columns, and per column the result is the same."""


def ppi_py_module():
    """The ``ppi_py`` module, or a one-line error naming the extra that installs it."""
    try:
        import ppi_py
    except ImportError:
        raise InputError("the estimate needs ppi-python (ppi_py), which is not installed: "
                         "pip install 'evalset[estimate]'") from None
    return ppi_py


def quantile(level: float, interval: str, df: np.ndarray | float) -> np.ndarray:
    """The two-sided quantile of ``level``: Student's t on ``df`` degrees of freedom, or normal."""
    if interval not in INTERVALS:
        raise InputError(f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    if np.ndim(df) == 0:
        return np.asarray(_scalar_quantile(level, interval, float(df)))
    from scipy import stats

    return np.asarray(stats.t.ppf(1 - (1 - level) / 2, df), dtype=float) if interval == "t" else \
        np.full(np.shape(df), _scalar_quantile(level, "normal", np.inf))


@functools.lru_cache(maxsize=256)
def _scalar_quantile(level: float, interval: str, df: float) -> float:
    from scipy import stats

    upper = 1 - (1 - level) / 2
    return float(stats.t.ppf(upper, df) if interval == "t" else stats.norm.ppf(upper))


def _as_2d(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[:, None] if values.ndim == 1 else values


Bounds = tuple[float, float]


def variance_floor(n: int, bounds: Bounds, mean: np.ndarray | float | None = None) -> np.ndarray:
    """The least per-query variance credited to a slice of ``n`` values in ``bounds`` with this ``mean`` (at a
    bound when ``None``, as for a paired difference): ``w² q (1 - q) / (n + 2)`` (module docstring)."""
    low, high = bounds
    width = high - low
    position = 0.0 if mean is None else np.clip((np.asarray(mean, dtype=float) - low) / width, 0.0, 1.0)
    q = (n * position + 1) / (n + 2)
    return np.asarray(width**2 * q * (1 - q) / (n + 2))


def _floor(labelled: np.ndarray, n: int, bounds: Bounds, difference: bool, mean: np.ndarray) -> np.ndarray:
    """The floor of each column: a mean's at its estimate; a difference's at a bound, where its slice ties only."""
    if not difference:
        return variance_floor(n, bounds, mean)
    return np.where(np.ptp(labelled, axis=0) == 0, variance_floor(n, bounds), 0.0)


def _range(bounds: Bounds, difference: bool) -> Bounds:
    width = bounds[1] - bounds[0]
    return (-width, width) if difference else bounds


def _bounded(table: pd.DataFrame, bounds: Bounds | None, difference: bool, labelled: np.ndarray) -> pd.DataFrame:
    """``table`` with its interval clipped to the range, and the ``clipped`` and ``degenerate`` flags."""
    table = table.assign(degenerate=np.ptp(labelled, axis=0) == 0)
    if bounds is None:
        return table.assign(clipped=False)
    low, high = _range(bounds, difference)
    clipped = (table["low"] < low) | (table["high"] > high)
    return table.assign(low=table["low"].clip(low, high), high=table["high"].clip(low, high), clipped=clipped)


def ppi_means(labelled: np.ndarray, predicted: np.ndarray, unlabelled: np.ndarray, *, level: float = 0.95,
              interval: str = "t", columns: list[str] | None = None, bounds: Bounds | None = None,
              difference: bool = False) -> pd.DataFrame:
    """PPI++ means of each column: ``labelled`` (n x d) human values on the slice, ``predicted`` (n x d) LLM values
    on the same queries, ``unlabelled`` (N x d) LLM values on the other queries; ``bounds`` the measure's range
    (``difference``: the columns are paired differences of such values).

    Returns one row per column: ``estimate, low, high, se, n, N, effective_n, degenerate, clipped`` (see the
    module docstring).
    """
    ppi_py = ppi_py_module()
    labelled, predicted, unlabelled = _as_2d(labelled), _as_2d(predicted), _as_2d(unlabelled)
    n, d = labelled.shape
    if n < 2:
        raise InputError(f"a slice of {n} human-graded queries: an interval needs at least 2")
    if len(unlabelled) == 0:
        raise InputError("no query outside the slice: the humans graded every query, so use their mean")
    quantile(level, interval, n - 1)  # refuses an unknown interval before any work
    informative = np.ptp(np.vstack([predicted, unlabelled]), axis=0) > 0
    estimate, low, high = np.empty(d), np.empty(d), np.empty(d)
    for start in range(0, d, COLUMNS_AT_ONCE):
        block = np.arange(start, min(d, start + COLUMNS_AT_ONCE))
        for columns_of, lam in ((block[informative[block]], None), (block[~informative[block]], 0.0)):
            if len(columns_of):
                args = (labelled[:, columns_of], predicted[:, columns_of], unlabelled[:, columns_of])
                estimate[columns_of] = np.ravel(ppi_py.ppi_mean_pointestimate(*args, lam=lam,
                                                                                lam_optim_mode="element"))
                found = ppi_py.ppi_mean_ci(*args, alpha=1 - level, lam=lam, lam_optim_mode="element")
                low[columns_of], high[columns_of] = np.ravel(found[0]), np.ravel(found[1])
    se = (high - low) / (2 * quantile(level, "normal", np.inf))
    if bounds is not None:  # the labelled (rectifier) part of PPI++'s variance is at least the floor
        se = np.maximum(se, np.sqrt(_floor(labelled, n, bounds, difference, estimate) / n))
    if interval == "t" or bounds is not None:
        half = quantile(level, interval, n - 1) * se
        low, high = estimate - half, estimate + half
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(se > 0, labelled.var(axis=0) / se**2, np.nan)
    table = pd.DataFrame({"estimate": estimate, "low": low, "high": high, "se": se, "n": n, "N": len(unlabelled),
                          "effective_n": effective}, index=columns)
    return _bounded(table, bounds, difference, labelled)


def classical_means(labelled: np.ndarray, *, level: float = 0.95, interval: str = "t",
                    columns: list[str] | None = None, bounds: Bounds | None = None,
                    difference: bool = False) -> pd.DataFrame:
    """The classical mean of each column of ``labelled`` (n x d) with its interval (the human-only estimate):
    ``estimate, low, high, se, n, degenerate, clipped`` (``bounds``, ``difference``: as :func:`ppi_means`')."""
    labelled = _as_2d(labelled)
    n = len(labelled)
    if n < 2:
        raise InputError(f"a slice of {n} human-graded queries: an interval needs at least 2")
    estimate = labelled.mean(axis=0)
    variance = labelled.var(axis=0, ddof=1)
    if bounds is not None:
        variance = np.maximum(variance, _floor(labelled, n, bounds, difference, estimate))
    se = np.sqrt(variance / n)
    half = quantile(level, interval, n - 1) * se
    table = pd.DataFrame({"estimate": estimate, "low": estimate - half, "high": estimate + half, "se": se, "n": n},
                         index=columns)
    return _bounded(table, bounds, difference, labelled)


def combine_strata(per_stratum: Mapping[str, pd.DataFrame], shares: Mapping[str, float], *, level: float = 0.95,
                   interval: str = "t", bounds: Bounds | None = None, difference: bool = False) -> pd.DataFrame:
    """The weighted estimate across strata of per-stratum tables (:func:`ppi_means` or :func:`classical_means`,
    one row per column, the same columns in each): ``estimate, low, high, se, n`` (and ``N, effective_n`` when the
    tables have them), the shares renormalised to sum to 1 (module docstring); the interval clipped to the range
    of ``bounds`` (``clipped``), ``degenerate`` when every stratum's slice was."""
    names = list(per_stratum)
    weights = np.array([shares[name] for name in names], dtype=float)
    if not len(names) or weights.sum() <= 0:
        raise InputError("no stratum with a positive traffic share to weight")
    weights = weights / weights.sum()
    tables = [per_stratum[name] for name in names]
    estimate = sum(w * t["estimate"] for w, t in zip(weights, tables, strict=True))
    parts = [(w * t["se"]) ** 2 for w, t in zip(weights, tables, strict=True)]
    variance = sum(parts)
    se = np.sqrt(variance)
    if interval == "t":
        with np.errstate(divide="ignore", invalid="ignore"):
            df = variance**2 / sum(part**2 / (t["n"] - 1) for part, t in zip(parts, tables, strict=True))
        spread = quantile(level, "t", np.where(np.isfinite(df), df, np.inf))
    else:
        spread = quantile(level, interval, np.inf)
    combined = pd.DataFrame({"estimate": estimate, "low": estimate - spread * se, "high": estimate + spread * se,
                             "se": se, "n": sum(t["n"] for t in tables)})
    if all("N" in t for t in tables):
        combined["N"] = sum(t["N"] for t in tables)
        # a stratum's var(Y) is effective_n x se²: the classical weighted variance is sum(w² var(Y) / n)
        human_variance = sum(w**2 * t["effective_n"] * t["se"] ** 2 / t["n"] for w, t in zip(weights, tables,
                                                                                         strict=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            combined["effective_n"] = combined["n"] * human_variance / variance
    degenerate = np.logical_and.reduce([t["degenerate"].to_numpy() for t in tables]) \
        if all("degenerate" in t for t in tables) else np.zeros(len(combined), dtype=bool)
    combined = _bounded(combined, bounds, difference, np.zeros((1, len(combined))))
    return combined.assign(degenerate=degenerate)
