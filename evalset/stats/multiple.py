"""Many systems at once: the family-wise adjusted p-values of a family of pairs of runs, the groups of runs not
distinguishable from each other (a compact letter display), and the two-way ANOVA beside them.

Conventions
-----------
- The input is a complete matrix ``X`` of per-query values, queries x runs (no NaN: the caller leaves out the
  queries undefined for any run), and per-query weights ``w`` summing to 1: a run's mean is ``sum_q w_q X_qj``
  (uniform: ``w_q = 1/n``; a set weighted by traffic: ``w_q = share_s / n_s`` for query q of stratum s).
- A *family* is a list of pairs (i, j) of columns: every pair (all pairs), or every run against one baseline.
- **The randomised max-statistic test** (:func:`max_statistic_p_values`; over all pairs it is the randomised
  Tukey HSD of Carterette 2012, "Multiple testing in statistical analysis of systems-based information retrieval
  experiments", TOIS 30(1)): under the null hypothesis that the runs are exchangeable within each query, each
  permutation independently shuffles every row of ``X`` across the runs, computes the weighted column means m,
  and the statistic ``max over (i, j) in the family of |m_i - m_j|`` (all pairs: ``max(m) - min(m)``; against a
  baseline b: ``max_j |m_j - m_b|``). The single-step adjusted p-value of a pair is ``(1 + #{permutations whose
  statistic >= |observed m_i - m_j|}) / (1 + permutations)``, a statistic within 1e-12 (relative, as in
  :mod:`evalset.stats.paired`) of the observed difference counting as reaching it. It controls the family-wise
  error rate in the strong sense and uses the correlation between the pairs, where Bonferroni does not. The
  permutations are drawn from a seeded numpy Generator in chunks of :data:`PERMUTATION_CHUNK` (each chunk one
  ``Generator.permuted`` of a (chunk, queries, runs) array along its last axis): the same seed and chunk give
  the same p-values.
- **Bonferroni and Holm** (:func:`corrected_pair_p_values`): the raw p-value of a pair is the paired permutation
  test of :func:`evalset.stats.paired.permutation_p_values` (THE implementation; every pair shares one set of
  sign flips from one seeded generator) on the weighted per-query differences (``n w_q (X_qj - X_qi)``, whose
  plain mean is the weighted mean difference); the adjustment is ``statsmodels.stats.multitest.multipletests``.
- **The compact letter display** (:func:`compact_letters`): the insert-absorb algorithm of Piepho (2004, "An
  algorithm for a letter-based representation of all-pairwise comparisons", J. Comp. Graph. Stat. 13(2)). Two
  runs share a letter if and only if they are not different; letters are named in the order of the runs given
  (the best run first gets ``a``).
- **The two-way ANOVA without replication** (:func:`two_way_anova`): system + topic, one value per cell, the
  plain (unweighted) sums of squares: ``SS_system = n sum_j (mean_j - grand)^2``, ``SS_topic = r sum_q (mean_q -
  grand)^2``, ``SS_residual = SS_total - SS_system - SS_topic``, F = MS / MS_residual and its p from
  ``scipy.stats.f``.
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalset.contract import CORRECTIONS
from evalset.errors import InputError
from evalset.params import POSITIVE_INT, check
from evalset.stats.paired import permutation_p_values

__all__ = ["CORRECTIONS", "PERMUTATION_CHUNK", "Anova", "all_pairs", "baseline_pairs", "compact_letters",
           "corrected_pair_p_values", "letter", "max_statistic_p_values", "pair_matrix",
           "two_way_anova"]

"""The family-wise corrections: the randomised max-statistic test (Tukey HSD over all pairs), Holm, Bonferroni."""
PERMUTATION_CHUNK = 500
"""Permutations drawn at a time by :func:`max_statistic_p_values` (part of what a seed reproduces)."""
TOLERANCE = 1e-12


def all_pairs(runs: int) -> np.ndarray:
    """Every pair (i, j), i < j, of ``runs`` columns, as an array of shape (pairs, 2)."""
    return np.array(list(itertools.combinations(range(runs), 2)), dtype=np.int64).reshape(-1, 2)


def baseline_pairs(runs: int, baseline: int) -> np.ndarray:
    """The pairs (baseline, j) for every other column j."""
    return np.array([(baseline, j) for j in range(runs) if j != baseline], dtype=np.int64).reshape(-1, 2)


def _weights(matrix: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    n = matrix.shape[0]
    if weights is None:
        return np.full(n, 1.0 / n)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n,) or np.any(weights < 0) or not math.isclose(weights.sum(), 1.0, abs_tol=1e-9):
        raise InputError(f"per-query weights must be {n} non-negative numbers summing to 1")
    return weights


def _matrix(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 2:
        raise InputError(f"a queries x runs matrix with at least one query and two runs is needed, got shape "
                         f"{matrix.shape}")
    if not np.isfinite(matrix).all():
        raise InputError("the queries x runs matrix has undefined values: leave those queries out first")
    return matrix


def _family_statistic(means: np.ndarray, pairs: np.ndarray, runs: int) -> np.ndarray:
    """max over the family of |m_i - m_j|, per row of ``means`` (permutations x runs)."""
    if len(pairs) == runs * (runs - 1) // 2:  # every pair: the range of the means
        return means.max(axis=1) - means.min(axis=1)
    bases = np.unique(pairs[:, 0])
    if len(bases) == 1 and len(pairs) == runs - 1:  # one baseline against every other run
        return np.abs(means - means[:, [bases[0]]]).max(axis=1)
    return np.abs(means[:, pairs[:, 0]] - means[:, pairs[:, 1]]).max(axis=1)


def max_statistic_p_values(matrix: np.ndarray, pairs: np.ndarray, permutations: int, rng: np.random.Generator,
                           weights: np.ndarray | None = None) -> np.ndarray:
    """The single-step adjusted p-value of each pair of ``pairs`` (module docstring: the randomised Tukey HSD
    over all pairs), one per row of ``pairs``."""
    matrix, permutations = _matrix(matrix), check("permutations", permutations, POSITIVE_INT)
    weights = _weights(matrix, weights)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    means = weights @ matrix
    observed = np.abs(means[pairs[:, 0]] - means[pairs[:, 1]])
    reach = observed - TOLERANCE * np.maximum(1.0, observed)
    statistics = np.empty(permutations)
    n, runs = matrix.shape
    for start in range(0, permutations, PERMUTATION_CHUNK):
        size = min(PERMUTATION_CHUNK, permutations - start)
        shuffled = rng.permuted(np.broadcast_to(matrix, (size, n, runs)), axis=2)
        statistics[start:start + size] = _family_statistic(np.einsum("cqr,q->cr", shuffled, weights), pairs, runs)
    statistics.sort()
    extreme = permutations - np.searchsorted(statistics, reach, side="left")  # statistics >= reach
    return (extreme + 1) / (permutations + 1)


def corrected_pair_p_values(matrix: np.ndarray, pairs: np.ndarray, permutations: int, rng: np.random.Generator,
                            method: str, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(raw, adjusted)`` p-values of each pair: the paired permutation test of each pair's weighted per-query
    differences, adjusted by ``method`` (``holm`` or ``bonferroni``) over the family."""
    check("method", method, CORRECTIONS[1:])
    matrix, permutations = _matrix(matrix), check("permutations", permutations, POSITIVE_INT)
    weights = _weights(matrix, weights)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(pairs) == 0:
        return np.empty(0), np.empty(0)
    differences = (matrix[:, pairs[:, 1]] - matrix[:, pairs[:, 0]]).T * (weights * len(weights))
    raw = permutation_p_values(differences, permutations, rng)
    from statsmodels.stats.multitest import multipletests  # slow to import: imported where used

    adjusted = multipletests(raw, method=method)[1]
    return raw, np.asarray(adjusted, dtype=np.float64)


def pair_matrix(values: np.ndarray, pairs: np.ndarray, runs: int, diagonal: float = 1.0) -> np.ndarray:
    """A symmetric runs x runs matrix with ``values`` at the pairs, ``diagonal`` on the diagonal, NaN elsewhere."""
    matrix = np.full((runs, runs), np.nan)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    matrix[pairs[:, 0], pairs[:, 1]] = matrix[pairs[:, 1], pairs[:, 0]] = values
    np.fill_diagonal(matrix, diagonal)
    return matrix


# ------------------------------------------------------------------------------------- compact letter display
LETTERS = string.ascii_lowercase + string.ascii_uppercase
"""The names of the first letter groups; beyond them, Greek and then other characters (one character each)."""


def letter(index: int) -> str:
    """The name of the ``index``-th letter group: one character (``a``..``z``, ``A``..``Z``, then beyond)."""
    if index < len(LETTERS):
        return LETTERS[index]
    return chr(0x3B1 + index - len(LETTERS)) if index < len(LETTERS) + 25 else chr(0x4E00 + index)


def compact_letters(different: np.ndarray) -> list[str]:
    """The letters of each run (module docstring: Piepho's insert-absorb); ``different`` is a symmetric boolean
    runs x runs matrix, the runs in the order letters are named (by mean, the best first). Runs i and j share a
    letter if and only if ``different[i, j]`` is false."""
    different = np.asarray(different, dtype=bool)
    runs = different.shape[0]
    if different.shape != (runs, runs) or not np.array_equal(different, different.T):
        raise InputError("the matrix of differences must be square and symmetric")
    columns: list[frozenset[int]] = [frozenset(range(runs))] if runs else []
    for i, j in zip(*np.nonzero(np.triu(different, 1)), strict=True):
        split = []
        for column in columns:
            if i in column and j in column:
                split += [column - {i}, column - {j}]
            else:
                split.append(column)
        columns = _absorbed(split)
    columns.sort(key=lambda column: sorted(column))
    return ["".join(letter(k) for k, column in enumerate(columns) if run in column) for run in range(runs)]


def _absorbed(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """The columns that are no subset of another (a duplicate kept once)."""
    unique = list(dict.fromkeys(columns))
    return [column for column in unique if column and not any(column < other for other in unique)]


# ------------------------------------------------------------------------------------------------ ANOVA
@dataclass(frozen=True)
class Anova:
    """The two-way ANOVA without replication (system + topic) of a queries x runs matrix."""

    ss_system: float
    ss_topic: float
    ss_residual: float
    df_system: int
    df_topic: int
    df_residual: int
    f_system: float
    f_topic: float
    p_system: float
    p_topic: float

    @property
    def ms_residual(self) -> float:
        return self.ss_residual / self.df_residual if self.df_residual else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The sums of squares, degrees of freedom, F, p and MS residual (JSON-ready)."""
        from evalset.render import json_safe

        names = ("ss_system", "ss_topic", "ss_residual", "df_system", "df_topic", "df_residual", "f_system",
                 "f_topic", "p_system", "p_topic", "ms_residual")
        return json_safe({name: getattr(self, name) for name in names})

    def to_text(self) -> str:
        """One line: F and p of system and topic, MS residual."""
        return (f"two-way ANOVA (system + topic): system F({self.df_system}, {self.df_residual}) = "
                f"{self.f_system:.4g}, p = {self.p_system:.4g}; topic F({self.df_topic}, {self.df_residual}) = "
                f"{self.f_topic:.4g}, p = {self.p_topic:.4g}; MS residual {self.ms_residual:.4g}")


def two_way_anova(matrix: np.ndarray) -> Anova:
    """The two-way ANOVA without replication of ``matrix`` (queries x runs; module docstring)."""
    from scipy import stats  # slow to import: imported where used

    matrix = _matrix(matrix)
    n, runs = matrix.shape
    grand = matrix.mean()
    ss_system = float(n * np.sum((matrix.mean(axis=0) - grand) ** 2))
    ss_topic = float(runs * np.sum((matrix.mean(axis=1) - grand) ** 2))
    ss_residual = max(float(np.sum((matrix - grand) ** 2)) - ss_system - ss_topic, 0.0)
    df_system, df_topic = runs - 1, n - 1
    df_residual = df_system * df_topic
    ms_residual = ss_residual / df_residual if df_residual else math.nan

    def f_test(ss: float, df: int) -> tuple[float, float]:
        if not df_residual or ms_residual == 0:
            return math.nan, math.nan
        f = (ss / df) / ms_residual
        return float(f), float(stats.f.sf(f, df, df_residual))

    f_system, p_system = f_test(ss_system, df_system)
    f_topic, p_topic = f_test(ss_topic, df_topic) if df_topic else (math.nan, math.nan)
    return Anova(ss_system, ss_topic, ss_residual, df_system, df_topic, df_residual, f_system, f_topic, p_system,
                 p_topic)

