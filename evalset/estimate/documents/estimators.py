"""Per-query estimates of a decomposable measure (:mod:`evalset.metrics.decomposition`: p@k, dcg@k, ndcg@k,
ap@k) from a document sample, and their linearised residuals. The measure's terms (its quantity, numerator,
normaliser, weights and range, under the contract) come from the metrics engine
(:func:`evalset.metrics.documents.document_terms`), the runs' rankings as pool indexes from
:func:`evalset.metrics.documents.rank_pool`; this module writes no gain, discount or cutoff of its own.

Conventions
-----------
- For a quantity ``f`` of a pair's grade (its gain, or ``1[g >= j]``), the **difference estimator**
  ``f~ = m + I (f(g) - m) / pi``, ``I`` whether it was sampled, ``pi`` its inclusion probability and ``m`` the
  pair's prediction of ``f``: the calibrated LLM's ``m0`` (:mod:`evalset.judgments.calibration`; learnt on the other
  queries) **re-centred on its query**, ``m = m0 + r``, ``r`` the 1/pi-weighted mean residual ``f(g) - m0`` of the
  query's *other* sampled pairs with ``pi < 1``, shrunk by :data:`RECENTRE_PSEUDO_COUNT` (0 when there is none),
  and kept within the quantity's range (its values at the lowest and highest grade); a pair with ``pi = 1`` keeps
  ``m0`` (its ``f~`` is its grade's whatever ``m``). The calibration is learnt across
  queries, and queries differ (one has more relevant pairs than its judge's grades say): the re-centring takes
  that out of the residuals. On DL19 (B = 1,000, 200 draws, Llama-3-70B) it cut the "this set" width of nDCG@10's
  run means from 0.134 to 0.106 and their largest bias from 0.016 to 0.005 (the clamp of the counts below, whose
  residuals it shrinks); kept within range, AP's from 0.25 to 0.18 (unclipped, a point value below 0 swung AP's
  slopes: 0.67).
  Leaving the pair itself out keeps the estimator unbiased: the draws are independent, so ``I`` is independent of
  ``r`` and ``E[f~] = E[m] + f(g) - E[m] = f(g)``. Horvitz-Thompson's estimator has ``m = 0``. The residual is
  ``e = I (f(g) - m)``. The gain is estimated as such (not the gain of an estimated grade), so that every linear
  measure is unbiased whatever the gain.
- **The numerator** is the measure's over the ``f~`` at each place of the run: a linear one (P@k, DCG@k) is
  unbiased; AP's pairwise one is too (the products of two different pairs' ``f~`` are unbiased: the draws are
  independent). A retrieved document outside the pool, and a place beyond the run's end, has ``f~ = 0``.
- **The normaliser** (nDCG's ideal, AP's R) from the estimated counts ``c_j`` of the query's pairs with each of its
  levels (``sum of f~`` of the level's indicator): the measure's ``sum_j step_j A(c_j)`` (``A`` carried on
  linearly below 0, :func:`evalset.metrics.decomposition.discount_area`), each level's term unbiased where ``A`` is
  linear, and the whole never below the sampled pairs' own normaliser (``sum_j step_j A(seen_j)``, which the truth
  never is below: without that floor a thin query's normaliser nears 0 and its ratio swings, nDCG@10's bias 0.05
  on DL19). Each level's count clamped to at least its sampled pairs, and made non-increasing in ``j``, (before)
  biased the ideal up where a level's truth is 0 (a query without a pair of the top grade, whose judge still
  predicts some: ``E[max(c~, 0)] > 0``), 13% on DL19's query 104861: nDCG@10's run means were biased by
  -0.0069 at B = 2,150 and their "this set" interval covered 0.887; now -0.005 and 0.91 (the benchmark). A ratio:
  its bias is small, measured in the tests. A sample of a set's holes, whose known judgments keep the ideal away
  from 0, takes no floor (:mod:`evalset.estimate.documents.rules`). A normaliser of 0 makes the query undefined
  (NaN): the caller applies
  the contract's ``undefined``.
- **The expanded estimator** of a measure with a normaliser (a design's rule, ``ratio="expanded"``: the sample of a
  set's holes, :mod:`evalset.estimate.documents.rules`): per query, the measure at the **base point** ``b`` (a pair
  of ``pi`` 1 at its grade's value, every other pair at its prediction ``m``, in the numerator and in each level's
  count alike), plus each drawn pair's **change** ``D_d = T(b with d at its grade) - T(b)`` over ``pi_d``, plus each
  two drawn pairs' **interaction** ``D_de = T(b with both) - T(b) - D_d - D_e`` over ``pi_d pi_e``, ``T`` the
  measure's own ratio from the engine's terms (:meth:`evalset.metrics.documents.DocumentTerms.cross`: AP's numerator
  has a term in two places at once). Its expectation over the independent draws is the measure's second-order
  expansion in the pairs' departures from ``b``, whatever the ``pi``: exact where a query has one or two uncertain
  pairs (every hole drawn, the truth), otherwise off by the interactions of three pairs or more, with no ``1/pi`` in
  them. The plug-in ratio's bias (below) is the estimated totals' variance and covariance, ``(1 - pi) / pi`` times
  the departures squared. ``tests/estimate/documents/test_docestimators.py`` enumerates both. A drawn pair's
  residual is its change with its interactions with the other drawn pairs of its query over their ``pi``
  (``z_d = D_d + sum_e D_de / pi_e``; a linear measure's is ``w e``, the same): the variance ``sum over drawn d of
  (1 - pi) / pi^2 z_d^2``; the floor's terms (:func:`expanded_floor`) the changes at every grade, weighted by their
  predicted probabilities. Measured against the truth a hole sample can reach (each run's score with its own holes
  judged) on DL19's leave-one-group-out (Llama-3-70B, each run's share sized for 0.0105, 200 draws, seed 20191;
  :mod:`evalset.estimate.documents.holevalidation`), the bias of nDCG@10's run means over the 35 runs with holes:
  plug-in, summed squared z 108 (p 2e-9; idst_bert_p1 +0.0037, z 5.5; the hole-free best run biased too: only its
  ideal is estimated); the plug-in with a second-order (delta-method) correction, its covariance term and the
  area's Jensen gap at the count's normal spread, 57 (p 0.01; idst_bert_p1 +0.0016, z 3.1: a query with one hole of
  pi 0.15, whose drawn grade moves the ideal's counts by 5, is beyond a Taylor expansion); the changes alone
  (first order), 32.7 (p 0.58), no run's |bias| above 0.21 of its draws' spread, but every hole drawn not the
  truth (0.007 on a small set with two holes a query). A jackknife over the drawn pairs corrects nothing where a
  query has one drawn hole (most of DL19's). The **document sample keeps the plug-in ratio**: its base point is
  every pair's prediction, hundreds of departures a query, and their interactions at the ideal's cutoff (a count the
  judge puts at 12 whose truth is 8: each pair's change alone stays above 10 and moves nothing) biased nDCG@10's
  run means by -0.025 (first order; B = 2,150, 50 draws) against the plug-in's -0.003; the second-order
  correction, -0.015. Its run means cover 0.965 at B = 1,000 and **0.912 at B = 2,150** (the benchmark, 200
  draws; the standard error 1.10x and 0.91x the spread): the floor lifts the ideal where a level's truth is 0 (its
  estimated count dips below 0 half the time; query 104861's ideal +11%) and the area's concavity lowers it where a
  level's count is small and noisy (1124210's -3%), a bias of -0.003 on every run's mean that is the sum of the two.
  Measured at B = 2,150 (100 draws of ``simulate_documents``, where the estimator kept covers 0.907) and dropped: each
  level's **expected area** under the calibrated predictions of the unsampled pairs (a Poisson-binomial count; the
  ideal 8.8% high: the unsampled pairs are those the runs rank low), or with those predictions scaled per query by
  the sampled pairs' ``(1 - pi) / pi``-weighted ratio of grades to predictions (8-15% high); a **multiplicative
  re-centring** (the query's ratio of grades to predictions instead of their difference: the top level's count's
  spread on 104861 from 4.85 to 1.00) with the floor, bias +0.0064 (coverage 0.760), without it +0.016; that
  re-centring with each level's **Jensen gap** added back (``2 A(c) - E A(c + sd Z)``) and the ratio's delta-method
  correction (its variance and covariance terms), no floor: +0.0026 (0.888, 200 draws) but at B = 1,000 an ideal
  near 0 on thin queries (RMSE 27); the floor at half the sampled pairs' ideal, -0.041 at B = 1,000; the additive
  re-centring with both corrections and that floor, unbiased (+0.0003) but twice as noisy (RMSE 0.020, the standard
  error 0.72x the spread); the floor on the levels some sampled pair shows only, +0.014 (and +0.20 at B = 1,000),
  with the multiplicative re-centring and the Jensen gap +0.0004 at B = 2,150 (standard error 0.71x the spread) but
  -0.040 at B = 1,000; a held query's ideal residual the floor's own (each sampled pair's ``pi y A'(seen)``) instead
  of 0, 0.922 against 0.921 (200 draws).
- **Linearised residuals** ``z`` (runs x pairs): the estimate of a query is, to first order, its value plus ``sum over
  pairs of z_d / pi_d`` over the sampled ones, so its sampling variance is estimated by ``sum over sampled d of (1 -
  pi) / pi^2 z_d^2`` (:mod:`evalset.estimate.documents.estimate`). For a linear measure it is exact, ``z = w e``,
  ``w`` the pair's weight in the run; for a ratio ``z = (z_N - v sum_j step_j s_j e_j) / D``, the slope ``s_j`` of
  ``A`` its mean slope over one estimated standard deviation of ``c_j`` either side (the derivative at ``c_j`` when
  that deviation is 0; the plain derivative inflated nDCG's variance 8-60x in the prototype), slope 0 below 0 (no
  count is): the rise from ``max(c_j - sd, 0)`` to ``max(c_j + sd, 0)`` over the whole ``2 sd``; 0 on a query whose
  ideal is held at its floor (a count held there, AP's R, keeps its slope: measured on DL19, AP's "this set" SE of run
  means 0.98x the spread of its estimates at B = 1,000 and 2,150 with it kept, 0.71-1.29 with it 0; nDCG@10's 1.70x
  and 1.52x kept, 1.10x and 0.91x at 0). On DL19 (Llama-3-70B, 200 draws) nDCG@10's "this set" standard error of run
  means is 1.10x the spread of its estimates across draws at B = 1,000 (median over runs; the benchmark prints the
  range); the window cut at the sampled count (before) gave 0.84x with the floor above, the whole window 1.70x, and
  the window divided by its part above the clamp 1.65x under the clamped counts. A pairwise numerator's slopes
  ``dN/dx_d`` (at the pair's place) are taken at the **point values** (the human grade where sampled, the prediction
  elsewhere: ``f~`` itself, with its 1/pi, swung AP's variance 5x too high on DL19), and so is its ``v`` (the point
  values' ratio), over the estimate's own ``D`` (the point values' count made it 2x too low); a linear numerator's
  ``v`` is the estimate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evalset.metrics.documents import DocumentTerms, PoolRanking

RECENTRE_PSEUDO_COUNT = 5.0
"""The pseudo-count that shrinks a query's re-centring toward none: ``r`` times ``n / (n + 5)``, ``n`` the query's
other sampled pairs with ``pi < 1``. On DL19 (B = 1,000, 200 draws, Llama-3-70B) 2 and 5 met every target alike
(P@10's tau 0.883 and 0.884); on 8 pairs a query (tests/estimate/documents/test_docestimators.py) none, 0, let nDCG@4's
ratio swing (its bias 0.16)."""


@dataclass(frozen=True)
class Sample:
    """A document sample over the pool: each pair's query code, ``pi``, whether sampled, its human grade (read
    where sampled) and its predicted grade distribution over ``scale`` (``None``: Horvitz-Thompson, no prediction)."""

    query: np.ndarray
    queries: int
    pi: np.ndarray
    sampled: np.ndarray
    grade: np.ndarray
    scale: np.ndarray
    predicted: np.ndarray | None

    def _parts(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The prediction ``m`` of the quantity, re-centred on its query (module docstring), and its value at the
        sampled pairs' grades (0 elsewhere)."""
        truth = np.zeros(len(self.pi))
        rows = np.flatnonzero(self.sampled)
        truth[rows] = values[np.searchsorted(self.scale, self.grade[rows])]
        if self.predicted is None:
            return np.zeros(len(self.pi)), truth
        m = self.predicted @ values
        uncertain = self.pi < 1.0
        drawn = self.sampled & uncertain
        own = np.where(drawn, np.array([(truth - m) / self.pi, 1.0 / self.pi, np.ones(len(m))]), 0.0)
        totals = np.array([np.bincount(self.query, weights=part, minlength=self.queries) for part in own])
        residual, weight, count = totals[:, self.query] - own  # over the query's other sampled pairs
        shrink = count / (count + RECENTRE_PSEUDO_COUNT)
        shift = shrink * np.divide(residual, weight, out=np.zeros(len(m)), where=weight > 0)
        return np.where(uncertain, np.clip(m + shift, values.min(), values.max()), m), truth

    def estimated(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``f~`` and the residual ``e`` of the quantity whose value at each grade of the scale is ``values``
        (module docstring); both with a 0 appended at index ``N`` (outside the pool)."""
        m, truth = self._parts(values)
        residual = np.where(self.sampled, truth - m, 0.0)
        return np.r_[m + residual / self.pi, 0.0], np.r_[residual, 0.0]

    def plug_in(self, values: np.ndarray) -> np.ndarray:
        """Each pair's point value of the quantity: its grade's where sampled, its prediction elsewhere (with
        index ``N``): where a nonlinear estimator is linearised (``f~`` itself, with its 1/pi, would swing the
        slopes)."""
        m, truth = self._parts(values)
        return np.r_[np.where(self.sampled, truth, m), 0.0]

    def counts(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per query: the estimated count of an indicator ``values`` (0/1 per grade), the count's estimated
        sampling standard deviation, the sampled pairs with it; and the residual ``e`` (with index ``N``)."""
        estimated, residual = self.estimated(values)
        _, truth = self._parts(values)
        count = np.bincount(self.query, weights=estimated[:-1], minlength=self.queries)
        seen = np.bincount(self.query, weights=truth, minlength=self.queries)
        variance = np.bincount(self.query, weights=self.variance_factor * residual[:-1] ** 2, minlength=self.queries)
        return count, np.sqrt(variance), seen, residual

    def base_values(self, values: np.ndarray) -> np.ndarray:
        """The expanded estimator's base point of the quantity (module docstring): a pair of ``pi`` 1 at its grade's
        value, any other at its prediction; with index ``N``."""
        m, truth = self._parts(values)
        return np.r_[np.where(self.pi >= 1.0, truth, m), 0.0]

    @property
    def variance_factor(self) -> np.ndarray:
        """``(1 - pi) / pi^2`` on the sampled pairs, 0 elsewhere: each one's weight in the sampling variance."""
        return np.where(self.sampled, (1.0 - self.pi) / self.pi ** 2, 0.0)




def estimate_measure(terms: DocumentTerms, ranking: PoolRanking, sample: Sample, normaliser_floor: bool = True,
                     ratio: str = "plug-in") -> tuple[np.ndarray, np.ndarray]:
    """The per-query estimates (runs x queries; NaN where the normaliser is 0) of the measure of ``terms`` and the
    linearised residuals (runs x pairs) (module docstring); ``ranking`` is the pool's under ``terms.ranking``;
    ``normaliser_floor``: whether the estimated normaliser is held at the sampled pairs' own, ``ratio`` how a
    measure with a normaliser is estimated (``plug-in`` or ``expanded``; the design's rules,
    :mod:`evalset.estimate.documents.rules`)."""
    size = len(sample.pi)
    quantity = terms.quantity(sample.scale)
    estimated, residual = sample.estimated(quantity)
    numerator, slope = terms.numerator(estimated[ranking.position], ranking)
    pairwise = terms.form.numerator == "pairwise"
    point = sample.plug_in(quantity)[ranking.position] if pairwise else None
    if pairwise:
        point_numerator, slope = terms.numerator(point, ranking)
    z = scattered(slope, ranking.position, size) * residual[None, :size]
    if terms.form.normaliser == "none":
        return numerator, z
    depth = area_depth(ranking, sample)
    if ratio == "expanded":
        return expanded_ratio(terms, ranking, sample, depth)
    normaliser, slope_residual = _normaliser(terms, sample, depth, normaliser_floor)
    value = terms.ratio(numerator, normaliser)
    centre = np.nan_to_num(terms.ratio(point_numerator, point_normaliser(terms, sample, depth)) if pairwise
                           else value)
    inverse = np.divide(1.0, normaliser, out=np.zeros(len(normaliser)), where=normaliser > 0)
    return value, (z - centre[:, sample.query] * slope_residual[None, :]) * inverse[sample.query][None, :]


@dataclass(frozen=True)
class BasePoint:
    """The expanded estimator's base point of one measure (module docstring): the runs' numerators and slopes
    (runs x queries; runs x pairs), each pair's place in each run (-1: not ranked), each level's base values (with
    index ``N``), counts and step, the normaliser and the measure's value there (runs x queries)."""

    terms: DocumentTerms
    sample: Sample
    depth: int
    quantity: np.ndarray
    numerator: np.ndarray
    slope: np.ndarray
    place: np.ndarray
    levels: tuple[tuple[np.ndarray, np.ndarray, float], ...]
    normaliser: np.ndarray
    value: np.ndarray

    @classmethod
    def of(cls, terms: DocumentTerms, ranking: PoolRanking, sample: Sample, depth: int) -> BasePoint:
        base = sample.base_values(terms.quantity(sample.scale))
        numerator, slope = terms.numerator(base[ranking.position], ranking)
        levels, normaliser = [], np.zeros(sample.queries)
        for indicator, step in terms.levels(sample.scale):
            level = sample.base_values(indicator)
            count = np.bincount(sample.query, weights=level[:-1], minlength=sample.queries)
            normaliser += step * terms.area(count, depth)
            levels.append((level, count, step))
        runs, size = len(numerator), len(sample.pi)
        place = np.full((runs, size + 1), -1)
        place[np.arange(runs)[:, None, None], ranking.position] = np.arange(ranking.depth)
        return cls(terms, sample, depth, base, numerator, scattered(slope, ranking.position, size), place[:, :size],
                   tuple(levels), normaliser, np.nan_to_num(terms.ratio(numerator, normaliser)))

    def changes(self, moves: Sequence[tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]]
                ) -> tuple[np.ndarray, np.ndarray]:
        """Runs x cases: the measure's change from the base point when, in each case, the pairs of every move
        (``rows``, one per case, all of one query) take the values ``values(v)`` gives for a quantity's values ``v``
        at each grade (the quantity's, each level indicator's); and whether the normaliser is above 0 there."""
        scale, terms = self.sample.scale, self.terms
        query = self.sample.query[moves[0][0]]
        departures = [values(terms.quantity(scale)) - self.quantity[rows] for rows, values in moves]
        moved = self.numerator[:, query] + sum(self.slope[:, rows] * gap[None, :]
                                               for (rows, _), gap in zip(moves, departures, strict=True))
        if len(moves) == 2:
            (first, _), (second, _) = moves
            at_first, at_second = self.place[:, first], self.place[:, second]
            both = (at_first >= 0) & (at_second >= 0)
            moved += np.where(both, terms.cross(np.maximum(at_first, 0), np.maximum(at_second, 0)), 0.0) * (
                departures[0] * departures[1])[None, :]
        after = self.normaliser[query].copy()
        for (indicator, _), (level, count, step) in zip(terms.levels(scale), self.levels, strict=True):
            moved_count = count[query] + sum(values(indicator) - level[rows] for rows, values in moves)
            after += step * (terms.area(moved_count, self.depth) - terms.area(count[query], self.depth))
        return np.nan_to_num(terms.ratio(moved, after)) - self.value[:, query], after > 0


def expanded_ratio(terms: DocumentTerms, ranking: PoolRanking, sample: Sample,
                   depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The expanded estimator of a measure with a normaliser (module docstring): per query (runs x queries) its
    value at the base point plus each drawn pair's change over its ``pi`` and each two drawn pairs' interaction over
    their ``pi``'s product, and the residuals (runs x pairs: each drawn pair's change with its interactions, whose
    ``(1 - pi) / pi^2``-weighted squares are its variance); NaN where neither the base nor any drawn pair's change has
    a normaliser above 0."""
    point = BasePoint.of(terms, ranking, sample, depth)
    grade = np.searchsorted(sample.scale, sample.grade)

    def graded(rows: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        return rows, lambda values: values[grade[rows]]

    rows = np.flatnonzero(sample.sampled & (sample.pi < 1.0))
    change, defined = point.changes([graded(rows)])
    delta = np.zeros((len(point.value), len(sample.pi)))
    delta[:, rows] = change
    first, second = _together(rows, sample.query)
    joint = np.zeros((len(delta), 0))
    if len(first):
        joint = point.changes([graded(first), graded(second)])[0] - delta[:, first] - delta[:, second]
    weight = 1.0 / (sample.pi[first] * sample.pi[second])
    value = point.value + np.stack([
        np.bincount(sample.query, weights=row / sample.pi, minlength=sample.queries)
        + np.bincount(sample.query[first], weights=pair * weight, minlength=sample.queries)
        for row, pair in zip(delta, joint, strict=True)])
    residual = delta.copy()
    for one, other in ((first, second), (second, first)):
        np.add.at(residual, (slice(None), one), joint / sample.pi[other][None, :])
    defined = (point.normaliser > 0) | (np.bincount(sample.query[rows], weights=defined,
                                                    minlength=sample.queries) > 0)
    return np.where(defined[None, :], value, np.nan), residual


def _together(rows: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every two of ``rows`` of the same query: the first of each and the second."""
    by_query: dict[int, list[int]] = {}
    for row in rows:
        by_query.setdefault(int(query[row]), []).append(int(row))
    pairs = [pair for members in by_query.values() for pair in itertools.combinations(members, 2)]
    return np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64)


def expanded_floor(terms: DocumentTerms, ranking: PoolRanking,
                   sample: Sample) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The floor's terms of the expanded estimator (:mod:`evalset.estimate.documents.variance`): for each pair of
    ``pi < 1`` and each grade of the scale, the measure's change were the pair of that grade (runs x (pairs x
    grades)), the grade's predicted probability, the pair's ``pi`` and its query code: ``sum (1 - pi) / pi p
    Delta^2`` is the draw's variance were the grades drawn from their predictions."""
    point = BasePoint.of(terms, ranking, sample, area_depth(ranking, sample))
    rows = np.flatnonzero(sample.pi < 1.0)
    changes = [point.changes([(rows, lambda values, g=g: np.full(len(rows), values[g]))])[0]
               for g in range(len(sample.scale))]
    return (np.concatenate(changes, axis=1), sample.predicted[rows].T.ravel(),
            np.tile(sample.pi[rows], len(sample.scale)), np.tile(sample.query[rows], len(sample.scale)))


def area_depth(ranking: PoolRanking, sample: Sample) -> int:
    """The longest list a normaliser's area may reach without a cutoff: the runs' depth or a query's pairs."""
    return max(ranking.depth, int(np.bincount(sample.query).max(initial=1)))


def scattered(slope: np.ndarray, position: np.ndarray, size: int) -> np.ndarray:
    """Runs x pairs: each pair's slope at its place in each run (0 where the run lacks it)."""
    runs = position.shape[0]
    table = np.zeros((runs, size + 1))
    table[np.arange(runs)[:, None, None], position] = slope
    return table[:, :size]


def _normaliser(terms: DocumentTerms, sample: Sample, depth: int, floored: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per query the estimated normaliser, never below the sampled pairs' own when ``floored`` (module docstring),
    and per pair its linearised residual ``sum_j step_j s_j e_j`` (0 on a query whose ideal is held at the sampled
    pairs')."""
    normaliser, floor = np.zeros(sample.queries), np.zeros(sample.queries)
    slope_residual = np.zeros(len(sample.pi))
    for indicator, step in terms.levels(sample.scale):
        count, sd, seen, residual = sample.counts(indicator)
        normaliser += step * terms.area(count, depth)
        floor += step * terms.area(seen, depth)
        slope_residual += step * _secant(terms, count, sd, depth)[sample.query] * residual[:-1]
    if not floored:
        return normaliser, slope_residual
    held = (floor > normaliser) & (terms.form.normaliser == "ideal")
    return np.maximum(floor, normaliser), np.where(held[sample.query], 0.0, slope_residual)


def point_normaliser(terms: DocumentTerms, sample: Sample, depth: int) -> np.ndarray:
    """Per query the normaliser of the point values (each level's count of the human grades where sampled, the
    predictions elsewhere)."""
    total = np.zeros(sample.queries)
    for indicator, step in terms.levels(sample.scale):
        count = np.bincount(sample.query, weights=sample.plug_in(indicator)[:-1], minlength=sample.queries)
        total += step * terms.area(count, depth)
    return total


def _secant(terms: DocumentTerms, count: np.ndarray, sd: np.ndarray, depth: int) -> np.ndarray:
    """The area's mean slope over ``count +- sd``, 0 below 0 (no count is): the rise from ``max(count - sd, 0)`` to
    ``max(count + sd, 0)`` over the whole ``2 sd``; its derivative where ``sd`` is 0 (module docstring)."""
    low, high = np.maximum(count - sd, 0.0), np.maximum(count + sd, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        secant = (terms.area(high, depth) - terms.area(low, depth)) / (2.0 * sd)
    return np.where(sd > 0, secant, terms.area_slope(count, depth))
