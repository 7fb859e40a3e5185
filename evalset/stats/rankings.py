"""Rankings of systems and their agreement: ranks, Kendall's tau and tau_AP (agreement's rankings, reusability).

Conventions
-----------
- A system's rank is 1 for the best score; equal scores share the better rank (scipy's ``rankdata(method="min")``
  on negated scores); an undefined (NaN) score ranks last.
- Kendall's tau is scipy's ``kendalltau`` (tau-b: ties in either ranking are accounted for), with its p-value;
  NaN for fewer than 2 systems.
- tau_AP (Yilmaz, Aslam & Robertson 2008) weighs swaps near the top more: with the systems ordered by the
  *estimate* ranking, ``tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1``, where ``C(i)`` counts the systems
  above position i that the *reference* ranking also places above the one at i. It is asymmetric and needs strict
  orders: equal scores are ordered by name, ascending.
"""

from __future__ import annotations

import math

import numpy as np


def system_ranks(scores: np.ndarray) -> np.ndarray:
    """1 for the best score; equal scores share the better rank; an undefined score ranks last."""
    from scipy import stats  # slow to import: imported where used

    values = np.asarray(scores, dtype=np.float64)
    return stats.rankdata(-np.nan_to_num(values, nan=-np.inf), method="min").astype(int)


def kendall_tau(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b between two systems' scores, and its p-value (NaN, NaN for fewer than 2 systems)."""
    from scipy import stats

    if len(a) < 2:
        return math.nan, math.nan
    result = stats.kendalltau(a, b)
    return float(result.statistic), float(result.pvalue)


def tau_ap(reference: np.ndarray, estimate: np.ndarray, names: list[str] | None = None) -> float:
    """tau_AP of the ranking by ``estimate`` scores against the ranking by ``reference`` scores (higher is better).

    Equal scores are ordered by ``names`` ascending (default: position). NaN for fewer than 2 systems.
    """
    reference = np.asarray(reference, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    count = len(reference)
    if count < 2:
        return math.nan
    names = list(names) if names is not None else [f"{i:09d}" for i in range(count)]
    name_rank = np.argsort(np.argsort(np.array(names, dtype=object)))

    def positions(scores: np.ndarray) -> np.ndarray:
        order = np.lexsort((name_rank, -scores))  # score descending, then name ascending
        position = np.empty(count, dtype=np.int64)
        position[order] = np.arange(count)
        return position

    true_position = positions(reference)
    by_estimate = np.argsort(positions(estimate))
    total = 0.0
    for i in range(1, count):
        above = by_estimate[:i]
        correct = int(np.sum(true_position[above] < true_position[by_estimate[i]]))
        total += correct / i
    return 2.0 * total / (count - 1) - 1.0
