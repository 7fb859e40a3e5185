"""Prediction-powered means (PPI++) of per-query values, beside the classical mean of the human slice alone.

The units are queries. Humans grade every pair of a random slice of ``n`` queries (the labelled set, values
``Y``); an LLM grades every pair of every query (values ``Ŷ`` on the slice, ``Ŷ_u`` on the ``N`` other queries,
the unlabelled set). The PPI++ estimate of the mean (Angelopoulos, Duchi & Zrnic 2023) is
``mean(λ Ŷ_u) + mean(Y - λ Ŷ)``, unbiased for any ``λ``; ``λ`` is tuned from the data to minimise the variance
(clipped to [0, 1]; 0 is the classical mean, 1 plain PPI). The estimate and the standard error come from
``ppi_py`` (ppi-python, the method's reference implementation): :func:`ppi_py.ppi_mean_pointestimate` and
:func:`ppi_py.ppi_mean_ci` at ppi_py's own ``λ`` for ``lam_optim_mode="element"``, one per column (per run, or per
pair of runs for differences): ``cov(Y, Ŷ) / ((1 + n / N) var(Ŷ, Ŷ_u))`` (:func:`tuned_lambda`; the tests check it
gives ppi_py's figures), computed here because the interval needs the two parts of the variance it weighs.

Conventions
-----------
- ``interval="t"`` (the default): ppi_py's centre and standard error with Student's t quantile on
  Welch-Satterthwaite's degrees of freedom for its two parts, the rectifier's variance ``v_r`` (from the ``n``
  human-graded queries) and the imputed mean's ``v_i`` (from the ``N`` others):
  ``(v_r + v_i)² / (v_r² / (n - 1) + v_i² / (N - 1))``, ``n - 1`` when the LLM carries no weight (``λ = 0``).
  ppi_py's normal interval under-covers on small slices (about 0.90-0.94 at nominal 0.95 with 10 queries on TREC
  DL 2019). ``interval="normal"``: ppi_py's centre and standard error with the normal quantile. The table's
  ``df`` column holds the degrees of freedom.
- The human-only interval is the classical one on the slice: its mean, the standard error ``s / sqrt(n)``
  (``s`` with ddof 1), and the same quantile (t on ``n - 1`` degrees of freedom, or normal).
- ``effective_n``: the number of human-graded queries whose classical mean would have the PPI++ standard error,
  ``var(Y) / se²`` (variance with ddof 0, as ppi_py's standard error uses): what the LLM grades were worth.
- A column whose LLM values are all equal (labelled and unlabelled together) carries no information: ``λ`` is
  0 there (ppi_py would divide by a zero variance), so the estimate is the classical one.
- Strata (:func:`combine_strata`): the traffic-weighted estimate is ``sum(w_h est_h)`` with the shares ``w_h``
  renormalised to 1, its standard error ``sqrt(sum(w_h² se_h²))``; with the t quantile its degrees of freedom
  are Welch-Satterthwaite's, ``(sum w_h² se_h²)² / sum((w_h² se_h²)² / df_h)``, ``df_h`` a stratum's own.
- Bounded measures (``bounds``, the range ``[a, b]`` of a measure's values, width ``w = b - a``): near a bound a
  slice's values tie (``rr`` and ``p@10`` of a strong run are 1 on most queries), and a slice of 10 often misses
  the few queries that depart from the bound, so its spread understates the variance and the interval misses the
  truth. So the per-query variance is floored (:func:`departure_floor`). A column's values are ``c + I M``: ``c``
  the value they bunch at (a mean's bound nearer its estimate, the upper at the middle; ``0`` for a paired
  difference, where the two runs agree), ``I`` whether a query departs from it, ``M`` by how much. Then
  ``var >= p (1 - p) E[M²]`` for the share ``p`` of departing queries (``var(I M) = p E[M²] - p² E[M]²`` and
  ``E[M]² <= E[M²]``). The floor takes ``p`` by Laplace's rule of succession from the slice's ``k`` departures of
  ``n``, ``(k + 1) / (n + 2)``, and ``E[M²]`` as the slice's mean squared departure, or, when the slice shows none,
  the LLM's over every query (``reference``), or ``w²`` without one. Where most queries depart (nDCG, which is
  rarely exactly 0 or 1) the floor is a fraction ``p (1 - p)`` of a second moment and stays below the spread;
  where few do, it is what the departures a slice of ``n`` can miss would add. The human-only variance is
  ``max(s², floor)``; PPI++'s rectifier variance at least ``floor / n``; the point estimates are unchanged. Then
  every interval is clipped to the range (``[a, b]``, or ``[-w, w]`` for a difference); the tables say which were
  (``clipped``) and which slices were degenerate (``degenerate``: every value equal).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import PPI_INTERVALS
from evalset.errors import InputError
from evalset.params import check


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
    check("interval", interval, PPI_INTERVALS)
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


def departure_floor(labelled: np.ndarray, bounds: Bounds, *, difference: bool = False,
                    estimate: np.ndarray | None = None, reference: np.ndarray | None = None) -> np.ndarray:
    """The least per-query variance credited to each column of ``labelled`` (n x d) slice values in ``bounds``
    (``difference``: paired differences, in ``[-w, w]``): ``p (1 - p) E[M²]`` of the departures from the value the
    column bunches at (module docstring); ``estimate`` places a mean's bound (default: the slice mean);
    ``reference`` (m x d, the LLM's values of every query) sizes a departure where the slice shows none."""
    labelled = _as_2d(labelled)
    n = len(labelled)
    low, high = bounds
    width = high - low
    if difference:
        centre = np.zeros(labelled.shape[1])
    else:
        position = labelled.mean(axis=0) if estimate is None else np.asarray(estimate, dtype=float)
        centre = np.where(position >= (low + high) / 2, high, low)
    squared = (labelled - centre) ** 2
    departures = (squared > 0).sum(axis=0)
    size = np.full(labelled.shape[1], width**2)
    if reference is not None:
        known = (_as_2d(reference) - centre) ** 2
        seen = (known > 0).sum(axis=0)
        size = np.where(seen > 0, known.sum(axis=0) / np.maximum(seen, 1), size)
    size = np.where(departures > 0, squared.sum(axis=0) / np.maximum(departures, 1), size)
    share = (departures + 1) / (n + 2)
    return share * (1 - share) * size


def tuned_lambda(labelled: np.ndarray, predicted: np.ndarray, unlabelled: np.ndarray) -> np.ndarray:
    """ppi_py's power-tuning ``λ`` per column (``lam_optim_mode="element"``, clipped to [0, 1]), 0 where the LLM's
    values are all equal: ``cov(Y, Ŷ) / ((1 + n / N) var(Ŷ, Ŷ_u))`` (covariance with ddof 0, variance with ddof 1,
    over the slice's and the others' LLM values together)."""
    n, big_n = len(labelled), len(unlabelled)
    covariance = ((labelled - labelled.mean(axis=0)) * (predicted - predicted.mean(axis=0))).mean(axis=0)
    variance = np.vstack([predicted, unlabelled]).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(variance > 0, covariance / ((1 + n / big_n) * variance), 0.0)
    return np.clip(lam, 0.0, 1.0)


def _range(bounds: Bounds, difference: bool) -> Bounds:
    width = bounds[1] - bounds[0]
    return (-width, width) if difference else bounds


def _bounded(columns: dict[str, Any], bounds: Bounds | None, difference: bool,
             labelled: np.ndarray) -> dict[str, Any]:
    """``columns`` (arrays or scalars, in the table's order) with the interval clipped to the range and the
    ``degenerate`` and ``clipped`` flags, in numpy: pandas' per-column assign and clip cost more than the
    arithmetic, and a simulation makes thousands of these."""
    columns = {**columns, "degenerate": np.ptp(labelled, axis=0) == 0}
    if bounds is None:
        columns["clipped"] = False
    else:
        low, high = _range(bounds, difference)
        lows, highs = np.asarray(columns["low"], dtype=float), np.asarray(columns["high"], dtype=float)
        columns.update(low=np.clip(lows, low, high), high=np.clip(highs, low, high),
                       clipped=(lows < low) | (highs > high))
    return columns


def ppi_means(labelled: np.ndarray, predicted: np.ndarray, unlabelled: np.ndarray, *, level: float = 0.95,
              interval: str = "t", columns: list[str] | None = None, bounds: Bounds | None = None,
              difference: bool = False) -> pd.DataFrame:
    """PPI++ means of each column: ``labelled`` (n x d) human values on the slice, ``predicted`` (n x d) LLM values
    on the same queries, ``unlabelled`` (N x d) LLM values on the other queries; ``bounds`` the measure's range
    (``difference``: the columns are paired differences of such values).

    Returns one row per column: ``estimate, low, high, se, n, N, effective_n, df, degenerate, clipped`` (see the
    module docstring).
    """
    return pd.DataFrame(ppi_columns(labelled, predicted, unlabelled, level=level, interval=interval, bounds=bounds,
                                    difference=difference), index=columns)


def ppi_columns(labelled: np.ndarray, predicted: np.ndarray, unlabelled: np.ndarray, *, level: float = 0.95,
                interval: str = "t", bounds: Bounds | None = None, difference: bool = False) -> dict[str, Any]:
    """:func:`ppi_means`' table as its columns, arrays by name (``n`` and ``N`` scalars), without the DataFrame:
    for the thousands of slices of a simulation."""
    ppi_py = ppi_py_module()
    labelled, predicted, unlabelled = _as_2d(labelled), _as_2d(predicted), _as_2d(unlabelled)
    n, big_n = len(labelled), len(unlabelled)
    if n < 2:
        raise InputError(f"a slice of {n} human-graded queries: an interval needs at least 2")
    if big_n == 0:
        raise InputError("no query outside the slice: the humans graded every query, so use their mean")
    quantile(level, interval, n - 1)  # refuses an unknown interval before any work
    lam = tuned_lambda(labelled, predicted, unlabelled)
    estimate = np.ravel(ppi_py.ppi_mean_pointestimate(labelled, predicted, unlabelled, lam=lam))
    low, high = ppi_py.ppi_mean_ci(labelled, predicted, unlabelled, alpha=1 - level, lam=lam)
    variance = ((np.ravel(high) - np.ravel(low)) / (2 * quantile(level, "normal", np.inf))) ** 2
    imputed = (lam * unlabelled).var(axis=0) / big_n
    rectifier = np.maximum(variance - imputed, 0.0)
    if bounds is not None:
        floor = departure_floor(labelled, bounds, difference=difference, estimate=estimate,
                                reference=np.vstack([predicted, unlabelled]))
        rectifier = np.maximum(rectifier, floor / n)
    se = np.sqrt(rectifier + imputed)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (rectifier + imputed) ** 2 / (rectifier**2 / (n - 1) + imputed**2 / (big_n - 1))
    df = np.where(np.isfinite(df) & (se > 0), df, n - 1.0) if big_n > 1 else np.full(len(se), n - 1.0)
    half = quantile(level, interval, df) * se
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(se > 0, labelled.var(axis=0) / se**2, np.nan)
    return _bounded({"estimate": estimate, "low": estimate - half, "high": estimate + half, "se": se, "n": n,
                     "N": big_n, "effective_n": effective, "df": df}, bounds, difference, labelled)


def classical_means(labelled: np.ndarray, *, level: float = 0.95, interval: str = "t",
                    columns: list[str] | None = None, bounds: Bounds | None = None, difference: bool = False,
                    reference: np.ndarray | None = None) -> pd.DataFrame:
    """The classical mean of each column of ``labelled`` (n x d) with its interval (the human-only estimate):
    ``estimate, low, high, se, n, df, degenerate, clipped`` (``bounds``, ``difference``: as :func:`ppi_means`';
    ``reference``: the LLM's values of every query, which size a departure where the slice shows none, as
    :func:`departure_floor`'s)."""
    return pd.DataFrame(classical_columns(labelled, level=level, interval=interval, bounds=bounds,
                                          difference=difference, reference=reference), index=columns)


def classical_columns(labelled: np.ndarray, *, level: float = 0.95, interval: str = "t", bounds: Bounds | None = None,
                      difference: bool = False, reference: np.ndarray | None = None) -> dict[str, Any]:
    """:func:`classical_means`' table as its columns, arrays by name (``n`` a scalar), without the DataFrame."""
    labelled = _as_2d(labelled)
    n = len(labelled)
    if n < 2:
        raise InputError(f"a slice of {n} human-graded queries: an interval needs at least 2")
    estimate = labelled.mean(axis=0)
    variance = labelled.var(axis=0, ddof=1)
    if bounds is not None:
        variance = np.maximum(variance, departure_floor(labelled, bounds, difference=difference, reference=reference))
    se = np.sqrt(variance / n)
    half = quantile(level, interval, n - 1) * se
    return _bounded({"estimate": estimate, "low": estimate - half, "high": estimate + half, "se": se, "n": n,
                     "df": n - 1.0}, bounds, difference, labelled)


def combine_strata(per_stratum: Mapping[str, pd.DataFrame], shares: Mapping[str, float], *, level: float = 0.95,
                   interval: str = "t", bounds: Bounds | None = None, difference: bool = False) -> pd.DataFrame:
    """The weighted estimate across strata of per-stratum tables (:func:`ppi_means` or :func:`classical_means`,
    one row per column, the same columns in each): ``estimate, low, high, se, n, df`` (and ``N, effective_n`` when the
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
            df = variance**2 / sum(part**2 / t.get("df", t["n"] - 1) for part, t in zip(parts, tables, strict=True))
        df = np.where(np.isfinite(df), df, np.inf)
        spread = quantile(level, "t", df)
    else:
        df, spread = np.full(len(estimate), np.inf), quantile(level, interval, np.inf)
    combined = pd.DataFrame({"estimate": estimate, "low": estimate - spread * se, "high": estimate + spread * se,
                             "se": se, "n": sum(t["n"] for t in tables), "df": df})
    if all("N" in t for t in tables):
        combined["N"] = sum(t["N"] for t in tables)
        # a stratum's var(Y) is effective_n x se²: the classical weighted variance is sum(w² var(Y) / n)
        human_variance = sum(w**2 * t["effective_n"] * t["se"] ** 2 / t["n"] for w, t in zip(weights, tables,
                                                                                         strict=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            combined["effective_n"] = combined["n"] * human_variance / variance
    degenerate = np.logical_and.reduce([t["degenerate"].to_numpy() for t in tables]) \
        if all("degenerate" in t for t in tables) else np.zeros(len(combined), dtype=bool)
    combined = pd.DataFrame(_bounded({name: combined[name].to_numpy() for name in combined.columns}, bounds,
                                     difference, np.zeros((1, len(combined)))), index=combined.index)
    return combined.assign(degenerate=degenerate)
