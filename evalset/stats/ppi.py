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


def ppi_means(labelled: np.ndarray, predicted: np.ndarray, unlabelled: np.ndarray, *, level: float = 0.95,
              interval: str = "t", columns: list[str] | None = None) -> pd.DataFrame:
    """PPI++ means of each column: ``labelled`` (n x d) human values on the slice, ``predicted`` (n x d) LLM values
    on the same queries, ``unlabelled`` (N x d) LLM values on the other queries.

    Returns one row per column: ``estimate, low, high, se, n, N, effective_n`` (see the module docstring).
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
                bounds = ppi_py.ppi_mean_ci(*args, alpha=1 - level, lam=lam, lam_optim_mode="element")
                low[columns_of], high[columns_of] = np.ravel(bounds[0]), np.ravel(bounds[1])
    se = (high - low) / (2 * quantile(level, "normal", np.inf))
    if interval == "t":
        half = quantile(level, "t", n - 1) * se
        low, high = estimate - half, estimate + half
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(se > 0, labelled.var(axis=0) / se**2, np.nan)
    return pd.DataFrame({"estimate": estimate, "low": low, "high": high, "se": se, "n": n, "N": len(unlabelled),
                         "effective_n": effective}, index=columns)


def classical_means(labelled: np.ndarray, *, level: float = 0.95, interval: str = "t",
                    columns: list[str] | None = None) -> pd.DataFrame:
    """The classical mean of each column of ``labelled`` (n x d) with its interval (the human-only estimate):
    ``estimate, low, high, se, n``."""
    labelled = _as_2d(labelled)
    n = len(labelled)
    if n < 2:
        raise InputError(f"a slice of {n} human-graded queries: an interval needs at least 2")
    estimate = labelled.mean(axis=0)
    se = labelled.std(axis=0, ddof=1) / np.sqrt(n)
    half = quantile(level, interval, n - 1) * se
    return pd.DataFrame({"estimate": estimate, "low": estimate - half, "high": estimate + half, "se": se, "n": n},
                        index=columns)


def combine_strata(per_stratum: Mapping[str, pd.DataFrame], shares: Mapping[str, float], *, level: float = 0.95,
                   interval: str = "t") -> pd.DataFrame:
    """The weighted estimate across strata of per-stratum tables (:func:`ppi_means` or :func:`classical_means`,
    one row per column, the same columns in each): ``estimate, low, high, se, n`` (and ``N, effective_n`` when the
    tables have them), the shares renormalised to sum to 1 (module docstring)."""
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
    return combined
