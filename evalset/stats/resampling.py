"""Resampling: the paired permutation test's sign flips and the bootstrap interval of a mean, the one implementation
of each (:mod:`evalset.stats.paired` states the conventions; ``compare``, ``report``, ``plan``, the holes' ends and
the Tukey HSD use them).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from evalset.stats.strata import INTERVAL_METHODS

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


def bootstrap_interval(differences: np.ndarray, level: float, resamples: int, rng: np.random.Generator,
                       method: str = "bca") -> tuple[float, float]:
    """The bootstrap interval of the mean of ``differences`` (``method``: ``bca`` or ``percentile``); degenerate
    (both ends the value) when every resample would be equal."""
    from scipy import stats  # slow to import (1 s): imported where used, so that the CLI starts fast

    if len(differences) < 2 or np.all(differences == differences[0]):
        value = float(differences[0]) if len(differences) else math.nan
        return value, value
    sign = orientation(differences)
    with warnings.catch_warnings():  # a degenerate resample gives NaN ends, which the verdict calls undefined
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap((sign * differences,), np.mean, confidence_level=level, n_resamples=resamples,
                                 method=INTERVAL_METHODS[method], rng=rng, vectorized=True, batch=500)
    ends = sign * float(result.confidence_interval.low), sign * float(result.confidence_interval.high)
    return min(ends), max(ends)


def orientation(differences: np.ndarray) -> int:
    """+1 or -1: the sign that makes the differences' mean positive (a zero mean: their first non-zero value).
    An interval is drawn on the oriented differences and turned back, so that swapping baseline and candidate
    negates it exactly (BCa's bias correction counts resamples below the estimate: ties would tip it)."""
    mean = float(np.mean(differences)) if len(differences) else 0.0
    if mean != 0:
        return 1 if mean > 0 else -1
    nonzero = differences[differences != 0]
    return -1 if len(nonzero) and nonzero[0] < 0 else 1
