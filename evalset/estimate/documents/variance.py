"""The "this set" variance of the document design's columns (a run's mean, a paired difference): its floor, fixed
before the draw, and the degrees of freedom of its quantile.

Conventions
-----------
- A column's "this set" variance is estimated from its sampled pairs (:mod:`evalset.estimate.documents.estimate`):
  ``V = sum over sampled d with pi < 1 of a_d``, ``a_d = (1 - pi) / pi^2 z_d^2 / Q^2``. It rests on the few sampled
  pairs that carry the column, and is 0 when none of them was drawn: two runs that rank alike differ only on the
  pairs they place differently (the **separating** pairs), and when none of those was drawn the estimate said 0.
- **The floor** is what the column's sampling variance would be, computed from what could differ, whether or not
  it was drawn: ``F = sum over the pooled pairs d with pi < 1 of (1 - pi) / pi w_d^2 v_d / Q^2``, ``w_d`` the
  pair's weight in the column's per-query value (a run's; for a difference the candidate's minus the baseline's,
  0 off the separating pairs) and ``v_d`` the pair's variance of the quantity (its gain, or ``1[g >= rel]``) under
  its calibrated predicted distribution (:mod:`evalset.judgments.calibration`, learnt on the other queries); with no
  prediction (Horvitz-Thompson) the Bernoulli bound ``((max - min) / 2)^2``. It is the design's variance when the
  grades are drawn from their predictions; it does not depend on which pairs were drawn. The weights
  (:func:`column_weights`) are the numerator's slopes where nothing is relevant (the measure's weight of the
  place: P@k ``1/k`` on the top k, DCG@k the discount, AP ``1 / r`` within its cutoff, its rise when the pair
  alone turns relevant, the least of its slopes, so AP's floor leans narrow), over the normaliser of the point
  values (the human grade's where sampled, the prediction elsewhere): AP's R, their count; nDCG's ideal, the DCG
  of the point gains sorted from the highest, no larger than the estimator's ideal, so the floor leans wide (the
  ideal of the point values' grade counts instead gave the near-identical copy below an interval excluding 0 in
  7.5% of the draws at B = 2,150, against 0.5%). Two runs weigh every pair alike only when their
  per-query values are the same function of the grades: their difference is then exactly 0 (below).
- **The floor's share.** The column's variance is ``max(V, s F)``, ``s`` the design's share
  (:mod:`evalset.estimate.documents.rules`; a document sample's a quarter: the
  standard error never below half the floor's): the floor only catches an estimate far below what the column could
  vary by (no separating pair drawn, or only dull ones); taken whole (``max(V, F)``) it adds to every column's width,
  the estimate being right on average: on DL19 (Llama-3-70B, 200 draws) ``F`` was 1.2-1.3x the mean of ``V`` for
  P@10's columns, and the whole floor took P@10's run means' coverage to 0.983-0.987, half of it to 0.967-0.972, a
  quarter to 0.957-0.962.
- **Thin and drawn columns** (the design's ``thin_below`` and ``blend``; :func:`with_floor`): a sample of a set's
  holes takes ``max(V, F)`` only for a column drawn from fewer than ``thin_below`` units (its drawn pairs of
  ``pi < 1`` with a residual), and ``(1 - b) V + b F`` for any other (the measurements:
  :mod:`evalset.estimate.documents.rules`); a document sample floors every column as above.
- **The quantile** is Student's t on Satterthwaite's effective degrees of freedom of the terms the variance rests
  on, for the Poisson draw: each sampled term ``b = (1 - pi) / pi^2 z^2`` is a fixed amount times whether the pair
  was drawn, so ``V``'s variance is ``sum pi (1 - pi) b^2``, estimated by ``sum over sampled of (1 - pi) b^2``, and
  ``df = 2 V^2 / sum (1 - pi) b^2`` (one term at a small pi, 2 df; n equal ones, 2n / (1 - pi)); when the floor is
  taken, the same at its expected terms ``e``: ``2 (sum e)^2 / sum (1 - pi) / pi e^2``. The normal quantile ignored
  how few pairs carry a column: on DL19 at B = 2,150 P@10's run means covered 0.928, those with 20-30 sampled pairs
  in their top 10 0.86-0.88. Each term counted as one degree of freedom (``(sum b)^2 / sum b^2``, half as many for
  small pi) over-covered: 0.975 for P@10's run means at both budgets, against 0.957-0.962 with the design's.
- A column with no pair of ``pi < 1`` that could differ (its floor 0 and no sampled term: every pair that carries
  it graded for certain, or two runs identical on every pair) has variance 0 and its quantile the normal's. A
  difference of two runs that weigh every pair alike is exactly 0 (not the rounding of two sums in another order,
  which an interval of width 0 would exclude).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalset.estimate.documents.estimators import Sample, area_depth, point_normaliser, scattered
from evalset.estimate.documents.rules import DesignRules
from evalset.metrics.documents import DocumentTerms, PoolRanking


def pair_variance(sample: Sample, values: np.ndarray) -> np.ndarray:
    """Per pooled pair (and 0 at index ``N``, outside the pool): the variance of the quantity whose value at each
    grade of the sample's scale is ``values``, under the pair's predicted distribution; without a prediction the
    Bernoulli bound ``((max - min) / 2)^2`` (module docstring)."""
    values = np.asarray(values, dtype=np.float64)
    if sample.predicted is None:
        spread = np.full(len(sample.pi), ((values.max() - values.min()) / 2) ** 2)
    else:
        mean = sample.predicted @ values
        spread = np.maximum(sample.predicted @ values ** 2 - mean ** 2, 0.0)
    return np.r_[spread, 0.0]


def column_weights(terms: DocumentTerms, ranking: PoolRanking, sample: Sample) -> tuple[np.ndarray, np.ndarray]:
    """Runs x pairs: each pair's weight in each run's per-query value (module docstring), and the pairs' variance
    of the quantity it weighs (:func:`pair_variance`)."""
    quantity = terms.quantity(sample.scale)
    _, rise = terms.numerator(np.zeros(ranking.position.shape), ranking)  # the numerator's slopes at no relevance
    normaliser = np.ones(sample.queries)
    if terms.form.normaliser == "relevant":
        depth = area_depth(ranking, sample)
        normaliser = point_normaliser(terms, sample, depth)
    elif terms.form.normaliser == "ideal":
        normaliser = terms.sorted_numerator(sample.plug_in(quantity)[:-1], sample.query, sample.queries)
    inverse = np.divide(1.0, normaliser, out=np.zeros(len(normaliser)), where=normaliser > 0)
    weights = scattered(rise * inverse[None, :, None], ranking.position, len(sample.pi))
    return weights, pair_variance(sample, quantity)[:-1]


def columns_of(rows: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """The runs' ``rows`` (runs x anything) and, below them, each pair's candidate row minus its baseline row."""
    if not len(pairs):
        return rows
    base = np.array([b for b, _ in pairs], dtype=np.int64)
    cand = np.array([c for _, c in pairs], dtype=np.int64)
    return np.vstack([rows, rows[cand] - rows[base]])


def sampled_variance(residual: np.ndarray, factor: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of linearised residuals ``residual`` (columns x sampled pairs with pi < 1, each pair's
    ``factor = (1 - pi) / pi^2`` and ``pi``): the variance's sum ``sum b`` (``b = factor z^2``) and its
    Satterthwaite degrees of freedom ``2 (sum b)^2 / sum (1 - pi) b^2`` (module docstring), before the division
    by ``Q^2``."""
    terms = residual ** 2 * factor[None, :]
    return terms.sum(axis=1), _satterthwaite(terms, (1.0 - pi) * terms)


def floor_variance(weights: np.ndarray, spread: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of pair weights ``weights`` (columns x pairs; each pair's ``spread``, its variance of the
    quantity, and ``pi``): the floor ``sum e``, ``e = (1 - pi) / pi w^2 v``, and the degrees of freedom the
    sampled variance would have at it, ``2 (sum e)^2 / sum (1 - pi) / pi e^2`` (module docstring), before the
    division by ``Q^2``."""
    uncertain = (pi < 1.0) & (spread > 0)
    odds = (1.0 - pi[uncertain]) / pi[uncertain]
    terms = weights[:, uncertain] ** 2 * (odds * spread[uncertain])[None, :]
    return terms.sum(axis=1), _satterthwaite(terms, odds[None, :] * terms)


def with_floor(variance: np.ndarray, df: np.ndarray, floor: np.ndarray, floor_df: np.ndarray, units: np.ndarray,
               rules: DesignRules) -> tuple[np.ndarray, np.ndarray]:
    """The column's variance from the sampled one ``variance`` and its ``floor`` under the design's ``rules``
    (module docstring): a column drawn from fewer than ``rules.thin_below`` units (``units``: its drawn pairs of
    ``pi < 1`` with a residual) never below ``rules.floor_share`` of its floor, with the degrees of freedom of the one
    taken; any other, ``(1 - b) V + b F`` (``b`` the design's ``blend``) with the sampled one's."""
    thin = units < rules.thin_below
    low = rules.floor_share * floor
    taken = thin & (low > variance)
    blended = (1.0 - rules.blend) * variance + rules.blend * floor
    return np.where(taken, low, np.where(thin, variance, blended)), np.where(taken, floor_df, df)


def _satterthwaite(terms: np.ndarray, weighted: np.ndarray) -> np.ndarray:
    """``2 (sum terms)^2 / sum (weighted * terms)`` per row; infinite where the variance is 0 (the normal
    quantile: there is nothing to vary)."""
    total = terms.sum(axis=1)
    spread = (weighted * terms).sum(axis=1)
    return np.divide(2.0 * total ** 2, spread, out=np.full(len(terms), np.inf), where=(spread > 0) & (total > 0))
