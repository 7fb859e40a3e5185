"""The quantiles every interval uses, in one place: two-sided, of Student's t on a number of degrees of freedom, or of
the normal where that number is infinite (scipy's ``ppf``); and the interval a quantile makes of an estimate and its
standard error (:func:`around`). No module outside :mod:`evalset.stats` asks scipy for a quantile
(``tests/test_architecture.py``)."""

from __future__ import annotations

import math

import numpy as np


def two_sided(level: float, df: float | np.ndarray = math.inf) -> float | np.ndarray:
    """The quantile ``q`` with ``P(-q < X < q) = level``: ``X`` Student's t on ``df`` degrees of freedom, or normal
    where ``df`` is infinite (``df`` may be fractional, Satterthwaite's; NaN where it is 0 or less). A number for a
    number, an array for an array."""
    from scipy import stats

    upper = 1 - (1 - level) / 2
    degrees = np.asarray(df, dtype=float)
    finite = np.isfinite(degrees)
    value = np.where(finite, stats.t.ppf(upper, np.where(finite, degrees, 1.0)), stats.norm.ppf(upper))
    return float(value) if value.ndim == 0 else value


def around(estimate, se, quantile) -> tuple:
    """The interval ``estimate -+ quantile * se`` (its low and high ends), numbers or arrays alike (a quantile per
    column, :func:`two_sided`'s)."""
    half = quantile * se
    return estimate - half, estimate + half


def chi_square_tail(statistic: float, df: int) -> float:
    """``P(X >= statistic)`` for ``X`` chi-square on ``df`` degrees of freedom: the p-value of a sum of ``df``
    squared standard normal deviates (a simulation's per-column bias over its Monte Carlo error, summed)."""
    from scipy import stats

    return float(stats.chi2.sf(statistic, df))
