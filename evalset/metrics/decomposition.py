"""How a measure's value for one query decomposes over the query's documents: what the document-sampled design
(:mod:`evalset.estimate.documents`) sums with its weights, declared per measure in the registry
(:attr:`evalset.metrics.measures.MeasureKind.decomposition`) and bound to a contract by
:mod:`evalset.metrics.documents`.

A decomposable measure's value for a query is ``N(x) / D``: ``x_r`` a *quantity* of the grade of the document at
rank ``r`` (its gain under the contract, or whether it is relevant: grade >= the relevance level), ``N`` the
numerator over the ranking, ``D`` the normaliser over the query's judged documents (the pool):

========  ==========  ===========================================  ===============================================
measure   quantity    numerator N                                  normaliser D
========  ==========  ===========================================  ===============================================
p@k       relevant    ``sum_{r<=k} x_r / k`` (linear)              1
dcg@k     gain        ``sum_{r<=k} x_r / log2(r + 1)`` (linear)    1
ndcg@k    gain        dcg@k's                                      the ideal DCG@k: ``sum_j (gain(j) - gain(j'))
                                                                   A(c_j)``, ``j`` each positive grade, ``j'`` the
                                                                   grade below it, ``c_j`` the count of pairs with
                                                                   grade >= j, ``A`` the discounts' area below
ap@k      relevant    ``sum_{r<=k} x_r (1 + sum_{s<r} x_s) / r``   ``R = c_rel``, the count of relevant pairs
                      (pairwise)
========  ==========  ===========================================  ===============================================

``A(c)`` (:func:`discount_area`) is the sum of the discounts of the first ``c`` ranks (the ideal ranking's pairs of
grade >= j fill its first ``c_j`` ranks), extended between integers as the integral of ``1 / log2(ceil(x) + 1)``
from 0 to ``min(c, k)``, so that an estimated count has an ideal. A measure with a normaliser is undefined where
it is 0 (nDCG without gain, AP without a relevant document), as the engine's.

Under ``ties=expected`` each document of a tie group is equally likely at each of the group's places, so a linear
numerator's expectation gives each place the mean weight of its group's places (:func:`group_mean`); the pairwise
numerator's expectation over the orders is not derived here, and such a measure is refused under that rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

Quantity = Literal["gain", "relevant"]
Numerator = Literal["linear", "pairwise"]
Normaliser = Literal["none", "ideal", "relevant"]


@dataclass(frozen=True)
class Decomposition:
    """How one measure decomposes (module docstring): the ``quantity`` of a grade it sums, its ``numerator``'s
    form, its ``normaliser``, and for a linear numerator the ``weight`` of each 0-based place given the cutoff
    (``None``: the whole ranking)."""

    quantity: Quantity
    numerator: Numerator
    normaliser: Normaliser
    weight: Callable[[np.ndarray, int | None], np.ndarray] | None = None


def gain(grade: np.ndarray, kind: str) -> np.ndarray:
    """The gain of each grade: the grade (``linear``) or ``2^grade - 1`` (``exponential``); 0 for a grade below 0
    (pooled but not judged)."""
    value = np.asarray(grade).astype(np.float64)
    np.maximum(value, 0.0, out=value)
    if kind != "linear":
        np.exp2(value, out=value)
        value -= 1.0
    return value


def dcg_conventions(gain_kind: str) -> str:
    """DCG's and nDCG's conventions in words, for a score table (:func:`gain` of ``gain_kind``, :func:`discount`, the
    ideal's scope as the engine builds it)."""
    said = "the grade (linear)" if gain_kind == "linear" else "2^grade - 1 (exponential)"
    return (f"gain {said}, discount 1/log2(rank + 1), ideal: every judged document of the query in grade order, cut "
            "at k where the measure has one (trec_eval's)")


def discount(position: np.ndarray) -> np.ndarray:
    """DCG's discount of a 0-based position: 1 / log2(rank + 1)."""
    return 1.0 / np.log2(position + 2.0)


def within(position: np.ndarray, cutoff: int | None) -> np.ndarray:
    """1 for a 0-based place within the cutoff (every place without one), else 0."""
    return np.ones(position.shape) if cutoff is None else (position < cutoff).astype(np.float64)


def discounted(position: np.ndarray, cutoff: int | None) -> np.ndarray:
    """DCG's weight of a place: its discount within the cutoff, 0 beyond."""
    return discount(position) * within(position, cutoff)


def per_cutoff(position: np.ndarray, cutoff: int | None) -> np.ndarray:
    """P@k's weight of a place: 1/k within the cutoff, 0 beyond."""
    return within(position, cutoff) / cutoff


def discount_area(counts: np.ndarray, k: int) -> np.ndarray:
    """``A(c)``: the integral of ``1 / log2(ceil(x) + 1)`` from 0 to ``min(c, k)`` (piecewise linear; at an integer
    count, the sum of the discounts of its first ranks); below 0, ``c`` (its slope at 0 carried on: an estimated
    count can go below 0, and its expectation stays linear there)."""
    table = np.r_[0.0, np.cumsum(discount(np.arange(k)))]
    c = np.minimum(counts, k)
    whole = np.clip(np.floor(c), 0, k - 1).astype(np.int64)
    return table[whole] + (c - whole) * discount(whole)


def discount_area_slope(counts: np.ndarray, k: int) -> np.ndarray:
    """The derivative of :func:`discount_area` at ``counts`` (from the right; 1 below 0, 0 from ``k`` on)."""
    return np.where(counts < k, discount(np.floor(np.clip(counts, 0.0, k - 1))), 0.0)


def pairwise_numerator(x: np.ndarray, rank_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AP's numerator ``sum_r x_r (1 + sum_{s<r} x_s) w_r`` over the last axis (``w_r = 1/r`` within the cutoff, 0
    beyond) and its slope in each ``x_r``: ``(1 + sum_{s<r} x_s) w_r + sum_{s>r} x_s w_s``."""
    above = np.cumsum(x, axis=-1) - x
    weighted = x * rank_weight
    below = np.cumsum(weighted[..., ::-1], axis=-1)[..., ::-1] - weighted
    return (weighted * (1.0 + above)).sum(axis=-1), (1.0 + above) * rank_weight + below


def group_mean(weight: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Each place's mean weight over its tie group's places (``start``, ``size``: the group's first 0-based place
    and length at each place; ``weight`` over the places, last axis)."""
    area = np.concatenate([np.zeros((*weight.shape[:-1], 1)), np.cumsum(weight, axis=-1)], axis=-1)
    return (np.take_along_axis(area, start + size, axis=-1) - np.take_along_axis(area, start, axis=-1)) / size


LINEAR_GAIN = Decomposition("gain", "linear", "none", discounted)
NORMALISED_GAIN = Decomposition("gain", "linear", "ideal", discounted)
PRECISION = Decomposition("relevant", "linear", "none", per_cutoff)
AVERAGE_PRECISION = Decomposition("relevant", "pairwise", "relevant")
