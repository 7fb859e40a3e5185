"""Cohen's kappa from confusion matrices: point estimates, the asymptotic interval, the query-cluster
bootstrap, binarised kappa and the Landis-Koch reading.

One batched function (:func:`kappa_from_confusion`, a stack of confusion matrices at once) gives the point
estimates and the bootstrap's thousands of resampled kappas. It is scikit-learn's ``cohen_kappa_score`` with
``labels=`` the full scale, cell for cell (the tests check the two agree; scikit-learn is a test dependency
only). scikit-learn is not called per pair in the report because its input validation costs about 3 ms a call:
1,683 calls for 34 annotators, a third of the 30-second budget.

Conventions
-----------
- A confusion matrix is ``K x K`` over the *full* scale of the guideline (row: annotator a's grade, column:
  annotator b's), so that weights follow the scale and not the grades that happen to occur.
- Disagreement weights follow the position on the scale, as scikit-learn's ``cohen_kappa_score(labels=scale)``:
  unweighted ``w_ij = [i != j]``, linear ``|i - j|``, quadratic ``(i - j)^2``. On the usual scale of consecutive
  integers (0-3) that is the difference of grade values.
- ``kappa = 1 - sum(w * observed) / sum(w * expected)``, expected = outer product of the two marginals / n.
  **A constant annotator** (one grade to every item in common) agrees at chance by construction: observed equals
  expected disagreement whatever the other did, so kappa is **0**, as scikit-learn's ``cohen_kappa_score`` says,
  with a note (read the raw agreement). Kappa is *undefined* (NaN) only when it is 0/0: no item in common, or no
  expected disagreement (both annotators constant on the same grade). One rule for ``agreement``, its annotator
  quality and ``pull --gold`` (:func:`evalset.quality.gold.kappa_against_gold`).
- Asymptotic standard error: Fleiss, Cohen & Everitt (1969), the large-sample variance under the alternative,
  as statsmodels' ``cohens_kappa(...).std_kappa``; the Wald interval ``kappa +- z * se`` treats items as
  independent, which pairs of one query are not: read the bootstrap interval first.
- Bootstrap: queries are the resampled units (clusters). Each resample draws as many queries as the pair has
  in common, with replacement, from a numpy Generator seeded with ``seed`` (the same draws for every pair, so a
  pair's interval does not depend on the other annotators given). The interval is the percentile interval;
  resamples where kappa is undefined are left out and counted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evalset.contract import KAPPA_KINDS
from evalset.params import check
from evalset.seeds import generator
from evalset.stats.quantiles import two_sided

"""The three kappas every pair gets; the keys ``kappa``, ``kappa_linear``, ``kappa_quadratic`` in reports."""

LANDIS_KOCH = ((0.0, "poor"), (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"),
               (1.0, "almost perfect"))
"""Landis & Koch (1977): below 0 poor; up to .20 slight, .40 fair, .60 moderate, .80 substantial, then almost
perfect (an upper bound belongs to the band it closes)."""


def landis_koch(kappa: float | None) -> str:
    """The Landis-Koch reading of a kappa ("undefined" for NaN/None)."""
    if kappa is None or math.isnan(kappa):
        return "undefined"
    if kappa < 0:
        return "poor"
    for bound, reading in LANDIS_KOCH[1:]:
        if kappa <= bound:
            return reading
    return LANDIS_KOCH[-1][1]


def disagreement_weights(size: int, kind: str) -> np.ndarray:
    """The ``size x size`` disagreement weights of one kappa kind (see the module conventions)."""
    check("kappa kind", kind, KAPPA_KINDS)
    distance = np.abs(np.subtract.outer(np.arange(size), np.arange(size))).astype(np.float64)
    if kind == "unweighted":
        return (distance > 0).astype(np.float64)
    return distance if kind == "linear" else distance**2


def confusion_matrix(reference: np.ndarray, grades: np.ndarray, scale: Sequence[int]) -> np.ndarray:
    """``K x K`` counts of two grade vectors on ``scale``: rows the reference grade, columns the grade compared."""
    scale = np.asarray(sorted(scale))
    size = len(scale)
    rows, cols = np.searchsorted(scale, reference), np.searchsorted(scale, grades)
    return np.bincount(rows * size + cols, minlength=size * size).reshape(size, size)


def kappa_from_confusion(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted kappa of one confusion matrix or a stack of them (``(..., K, K)``); NaN where undefined."""
    confusion = np.asarray(confusion, dtype=np.float64)
    rows = confusion.sum(axis=-1)
    cols = confusion.sum(axis=-2)
    n = rows.sum(axis=-1)
    size = confusion.shape[-1]
    observed_d = confusion.reshape(*confusion.shape[:-2], size * size) @ weights.reshape(size * size)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected_d = ((rows @ weights) * cols).sum(axis=-1) / n
        kappa = 1.0 - observed_d / expected_d
    return np.where((n > 0) & (expected_d > 1e-12 * np.maximum(n, 1)), kappa, np.nan)


def asymptotic_se(confusion: np.ndarray, weights: np.ndarray) -> float:
    """Large-sample standard error of (weighted) kappa, Fleiss, Cohen & Everitt (1969); NaN if undefined."""
    confusion = np.asarray(confusion, dtype=np.float64)
    n = confusion.sum()
    kappa = float(kappa_from_confusion(confusion, weights))
    if n == 0 or math.isnan(kappa):
        return math.nan
    agreement = 1.0 - weights / weights.max()
    p = confusion / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    expected_agreement = float((agreement * np.outer(row, col)).sum())
    if expected_agreement >= 1.0:
        return math.nan
    row_mean = agreement @ col  # w_i. : agreement of row grade i with b's marginal
    col_mean = row @ agreement  # w_.j
    terms = p * (agreement - (row_mean[:, None] + col_mean[None, :]) * (1 - kappa)) ** 2
    variance = (terms.sum() - (kappa - expected_agreement * (1 - kappa)) ** 2) / ((1 - expected_agreement) ** 2 * n)
    return math.sqrt(max(variance, 0.0))


def wald_interval(kappa: float, se: float, level: float) -> tuple[float, float]:
    """``kappa -+ z * se`` with z the normal quantile of the two-sided level (NaN when either is NaN)."""
    if math.isnan(kappa) or math.isnan(se):
        return math.nan, math.nan
    z = two_sided(level)
    return kappa - z * se, kappa + z * se


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile interval from resampling queries; ``undefined`` resamples were left out."""

    low: float
    high: float
    resamples: int
    undefined: int


@functools.lru_cache(maxsize=8)
def query_draws(queries: int, resamples: int, seed: int) -> np.ndarray:
    """How often each query is drawn in each resample (``resamples x queries``): the same draws for every pair
    with the same number of queries."""
    rng = generator(seed)
    draws = rng.integers(0, queries, size=(resamples, queries))
    cells = (np.arange(resamples)[:, None] * queries + draws).ravel()
    counts = np.bincount(cells, minlength=resamples * queries).reshape(resamples, queries).astype(np.float64)
    counts.setflags(write=False)
    return counts


Statistic = tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]
"""A kappa to bootstrap: a map from ``(..., K, K)`` confusion matrices to the ``(..., k, k)`` ones it is computed
on (identity, or :func:`binarise`), and its ``k x k`` disagreement weights."""


def query_bootstrap(per_query: Sequence[np.ndarray], statistics: Sequence[Statistic], resamples: int,
                    level: float, seed: int, batch: int = 64) -> list[list[BootstrapInterval]]:
    """Percentile intervals of several kappas for several pairs, resampling queries (clusters) with replacement.

    ``per_query[p]`` is ``(Q_p, K, K)``: pair p's confusion matrix on each query it has in common. Pairs with the
    same number of queries share the draws (and are resampled together, ``batch`` pairs at a time). Returns
    ``intervals[p][s]`` for pair p and statistic s.
    """
    tail = (1 - level) / 2
    undefined = [BootstrapInterval(math.nan, math.nan, resamples, resamples) for _ in statistics]
    out: list[list[BootstrapInterval]] = [undefined] * len(per_query)
    by_size: dict[int, list[int]] = {}
    for index, confusions in enumerate(per_query):
        if confusions.shape[0] > 0 and resamples > 0:
            by_size.setdefault(confusions.shape[0], []).append(index)
    for queries, members in by_size.items():
        multiplicity = query_draws(queries, resamples, seed)
        for start in range(0, len(members), batch):
            chunk = members[start:start + batch]
            stacked = np.stack([per_query[p] for p in chunk]).astype(np.float64)  # (P, Q, K, K)
            size = stacked.shape[-1]
            resampled = multiplicity @ stacked.reshape(len(chunk), queries, size * size)  # (P, B, K*K)
            resampled = resampled.reshape(len(chunk), resamples, size, size)
            kappas = [kappa_from_confusion(transform(resampled), weights) for transform, weights in statistics]
            for row, pair in enumerate(chunk):
                out[pair] = [percentile_interval(values[row], tail, resamples) for values in kappas]
    return out


def percentile_interval(values: np.ndarray, tail: float, resamples: int) -> BootstrapInterval:
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return BootstrapInterval(math.nan, math.nan, resamples, resamples)
    low, high = np.quantile(defined, [tail, 1 - tail])
    return BootstrapInterval(float(low), float(high), resamples, resamples - defined.size)


def binarise(confusion: np.ndarray, level_index: int) -> np.ndarray:
    """Collapse ``(..., K, K)`` confusion matrices to 2 x 2: not relevant (scale position < level_index) vs
    relevant (>= level_index)."""
    confusion = np.asarray(confusion)
    groups = [slice(0, level_index), slice(level_index, None)]
    return np.stack([np.stack([confusion[..., r, c].sum(axis=(-2, -1)) for c in groups], axis=-1)
                     for r in groups], axis=-2)
