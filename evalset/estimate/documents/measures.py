"""Per-query estimates of DCG@k, nDCG@k, P@k and AP from a document sample, and their linearised residuals.

Conventions
-----------
- The pool is a list of pairs, each with a query code; a run is held as the pool index of the document at each of
  its ranks (:class:`RunRanks`, the ranking of :func:`evalset.metrics.ranking.order_run` under the contract's
  strict tie rule, so that a run's top k is the one evalset scores). A retrieved document outside the pool, and
  a rank beyond the run's end (or a query the run lacks), is index ``N`` (one past the pool), whose value is 0
  for humans and predictions alike.
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
  measure is unbiased whatever the gain (the contract's: ``linear`` g, ``exponential`` 2^g - 1).
- **DCG@k** ``= sum over the top k of gain~ / log2(rank + 1)``; **P@k** ``= (1/k) sum over the top k of
  1[g >= rel]~`` (``rel`` the contract's level). Both are linear in the ``f~``: unbiased.
- **nDCG@k** ``= DCG@k / ideal``. The ideal from the estimated counts ``c_j`` of the query's pairs with grade >= j
  (``j`` each positive grade of the scale), each clamped to at least the sampled pairs with grade >= j, then made
  non-increasing in ``j`` (``c_j`` raised to ``c_{j+1}``, from the top grade down); ``ideal = sum_j (gain(j) -
  gain(j-1)) F(c_j)``, ``F(c)`` the integral of ``1 / log2(ceil(x) + 1)`` from 0 to ``min(c, k)`` (exact at integer
  counts: the ideal ranking's pairs of grade >= j fill its first c_j ranks; for linear gain with grades 0-3 it is
  ``F(c3) + F(c2) + F(c1)``). A ratio: its bias is small, measured in the tests. An ideal of 0 gives 0.
- **AP** (statAP's ratio, Aslam, Pavlu & Yilmaz 2006, at relevance ``1[g >= rel]``, over the run's whole depth):
  ``sum over ranks r of x~_r (1 + sum_{s<r} x~_s) / r``, divided by ``R~``, the estimated count of relevant pairs
  clamped as the counts above (and 0 when it is 0). The products of two different pairs' ``x~`` are unbiased (the
  draws are independent), so the numerator is; the ratio is not.
- **Linearised residuals** ``z`` (runs x pairs): the estimate of a query is, to first order, its value plus
  ``sum over pairs of z_d / pi_d`` over the sampled ones, so its sampling variance is estimated by ``sum over
  sampled d of (1 - pi) / pi^2 z_d^2`` (:mod:`evalset.estimate.documents.estimate`). For DCG and P it is exact; for nDCG
  ``z = (w e_gain - nDCG sum_j (gain(j) - gain(j-1)) s_j e_j) / ideal``, ``w`` the pair's discount in the run, the
  slope ``s_j`` of ``F`` the secant over one estimated standard deviation of ``c_j`` either side (the derivative
  at ``c_j`` when that deviation is 0; the plain derivative inflated the variance 8-60x in the prototype), the
  secant's lower end no lower than the sampled count (the clamp's floor: below it the count cannot go); for AP
  ``z = e_rel (dN/dx_d - AP) / R~``, the slope ``dN/dx_d = (1 + sum_{s<r} x_s) / r + sum_{s>r} x_s / s`` (``r``
  the pair's rank in the run, 0 when the run lacks it) and AP taken at the **point values** ``x`` (the human grade
  where sampled, the prediction elsewhere: ``x~`` itself, with its 1/pi, swung the variance 5x too high on
  DL19), over the estimate's own ``R~`` (the point values' count made it 2x too low).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalset.contract import EvaluationContract
from evalset.errors import InputError
from evalset.metrics.ranking import order_run, strict_ties

MEASURES = ("dcg", "ndcg", "p", "ap")
"""The measures this design estimates: ``dcg@k``, ``ndcg@k``, ``p@k``, and ``ap`` (``map``) over the run's depth."""
RECENTRE_PSEUDO_COUNT = 5.0
"""The pseudo-count that shrinks a query's re-centring toward none: ``r`` times ``n / (n + 5)``, ``n`` the query's
other sampled pairs with ``pi < 1``. On DL19 (B = 1,000, 200 draws, Llama-3-70B) 2 and 5 met every target alike
(P@10's tau 0.883 and 0.884); on 8 pairs a query (tests/estimate/documents/test_docmeasures.py) none, 0, let nDCG@4's
ratio swing (its bias 0.16)."""


@dataclass(frozen=True)
class DocumentMeasure:
    """A measure this design estimates: its kind (:data:`MEASURES`) and cutoff (``None`` for AP: the run's depth)."""

    kind: str
    k: int | None

    def __str__(self) -> str:
        return self.kind if self.k is None else f"{self.kind}@{self.k}"

    @classmethod
    def parse(cls, text: str) -> DocumentMeasure:
        match = re.fullmatch(r"(n?dcg|p|P|ndcg_cut|P)[@_](\d+)|(m?ap)", text.strip())
        if not match or (match.group(2) is not None and int(match.group(2)) < 1):
            raise InputError(f"the document design estimates ndcg@k, dcg@k, p@k and ap; got {text!r}")
        if match.group(3):
            return cls("ap", None)
        kind = {"ndcg_cut": "ndcg", "P": "p"}.get(match.group(1), match.group(1))
        return cls(kind, int(match.group(2)))


@dataclass(frozen=True)
class RunRanks:
    """The runs as pool indexes: ``position[run, query, rank]`` (``N`` for a document outside the pool or no
    document), the runs' ``names`` in order."""

    names: tuple[str, ...]
    position: np.ndarray

    @property
    def depth(self) -> int:
        return self.position.shape[2]


def run_ranks(runs: Mapping[str, pd.DataFrame], pairs: pd.DataFrame, query_ids: list[str],
              contract: EvaluationContract, depth: int | None = None) -> RunRanks:
    """Each run's ranking (the contract's strict tie rule, duplicates counted once) as indexes into ``pairs``
    (``query_id, doc_id`` in pool order), over ``query_ids``; cut at ``depth`` ranks (default: the deepest run)."""
    index = pd.Series(np.arange(len(pairs)), index=pd.MultiIndex.from_frame(pairs[["query_id", "doc_id"]]))
    code = {query: number for number, query in enumerate(query_ids)}
    frames = []
    for number, run in enumerate(runs.values()):
        frame = order_run(run, strict_ties(contract.ties)).to_frame()
        frame = frame[frame["query_id"].isin(code)]
        if depth is not None:
            frame = frame[frame["rank"] <= depth]
        frames.append((number, frame))
    deepest = max((int(f["rank"].max()) for _, f in frames if len(f)), default=1)
    position = np.full((len(runs), len(query_ids), deepest if depth is None else depth), len(pairs), dtype=np.int64)
    for number, frame in frames:
        keys = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
        found = index.reindex(keys).to_numpy(dtype=np.float64)
        inside = ~np.isnan(found)
        queries = frame["query_id"].map(code).to_numpy()[inside]
        position[number, queries, frame["rank"].to_numpy()[inside] - 1] = found[inside].astype(np.int64)
    return RunRanks(tuple(runs), position)


def value_range(measure: DocumentMeasure, scale: np.ndarray, contract: EvaluationContract) -> tuple[float, float]:
    """The range of ``measure``'s values over a grade ``scale``: ``[0, 1]`` for nDCG@k, P@k and AP; for DCG@k
    ``[0, g F(k)]``, ``g`` the gain of the highest grade and ``F(k)`` the sum of the discounts of the top k."""
    if measure.kind != "dcg":
        return 0.0, 1.0
    return 0.0, float(gains(np.asarray(scale), contract).max(initial=0.0) * cumulative_discount(measure.k)[-1])


def gains(scale: np.ndarray, contract: EvaluationContract) -> np.ndarray:
    """The contract's gain of each grade of ``scale`` (linear: the grade; exponential: 2^grade - 1)."""
    scale = np.asarray(scale, dtype=np.float64)
    return scale if contract.gain == "linear" else np.exp2(scale) - 1.0


def cumulative_discount(k: int) -> np.ndarray:
    """``F`` at the integers 0..k: the sum of ``1 / log2(r + 1)`` for ranks r up to each."""
    return np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))]


def ideal_area(counts: np.ndarray, k: int) -> np.ndarray:
    """``F(c)``: the integral of ``1 / log2(ceil(x) + 1)`` from 0 to ``min(c, k)`` (piecewise linear)."""
    table = cumulative_discount(k)
    c = np.clip(counts, 0.0, k)
    whole = np.minimum(np.floor(c).astype(np.int64), k - 1)
    return table[whole] + (c - whole) / np.log2(whole + 2.0)


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
        """Per query: the estimated count of an indicator ``values`` (0/1 per grade) clamped to at least the
        sampled pairs with it, the count's estimated sampling standard deviation, that sampled count; and the
        residual ``e`` (with index ``N``)."""
        estimated, residual = self.estimated(values)
        _, truth = self._parts(values)
        count = np.bincount(self.query, weights=estimated[:-1], minlength=self.queries)
        seen = np.bincount(self.query, weights=truth, minlength=self.queries)
        variance = np.bincount(self.query, weights=self.variance_factor * residual[:-1] ** 2, minlength=self.queries)
        return np.maximum(count, seen), np.sqrt(variance), seen, residual

    @property
    def variance_factor(self) -> np.ndarray:
        """``(1 - pi) / pi^2`` on the sampled pairs, 0 elsewhere: each one's weight in the sampling variance."""
        return np.where(self.sampled, (1.0 - self.pi) / self.pi ** 2, 0.0)


def _top_weights(position: np.ndarray, k: int, weight: np.ndarray, size: int) -> np.ndarray:
    """Runs x (pairs + 1): the weight of each pair at its rank in each run's top k (0 when not there)."""
    runs = position.shape[0]
    top = position[:, :, :k]
    table = np.zeros((runs, size + 1))
    table[np.arange(runs)[:, None, None], top] = weight[None, None, :top.shape[2]]
    table[:, size] = 0.0
    return table


def _secant(count: np.ndarray, sd: np.ndarray, seen: np.ndarray, k: int) -> np.ndarray:
    low, high = np.maximum(count - sd, seen), count + sd
    span = high - low
    derivative = np.where(count < k, 1.0 / np.log2(np.floor(np.minimum(count, k - 1)) + 2.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        secant = (ideal_area(high, k) - ideal_area(low, k)) / span
    return np.where(span > 0, secant, derivative)


def estimate_measure(measure: DocumentMeasure, ranks: RunRanks, sample: Sample,
                     contract: EvaluationContract) -> tuple[np.ndarray, np.ndarray]:
    """The per-query estimates (runs x queries) of ``measure`` and the linearised residuals (runs x pairs)."""
    size = len(sample.pi)
    scale = sample.scale
    qcode = ranks.position.shape[1]
    if measure.kind in ("dcg", "ndcg", "p"):
        k = measure.k
        discount = 1.0 / np.log2(np.arange(2, k + 2)) if measure.kind != "p" else np.full(k, 1.0 / k)
        values = gains(scale, contract) if measure.kind != "p" else (scale >= contract.rel_level).astype(float)
        estimated, residual = sample.estimated(values)
        weights = _top_weights(ranks.position, k, discount[:ranks.depth], size)
        top = ranks.position[:, :, :k]
        per_query = (estimated[top] * discount[None, None, :top.shape[2]]).sum(axis=2)
        z = weights[:, :size] * residual[None, :size]
        if measure.kind != "ndcg":
            return per_query, z
        return _normalised(per_query, z, sample, scale, contract, k)
    if measure.kind == "ap":
        return _average_precision(ranks, sample, contract, size, qcode)
    raise InputError(f"unknown measure {measure}")


def _normalised(dcg: np.ndarray, z_dcg: np.ndarray, sample: Sample, scale: np.ndarray,
                contract: EvaluationContract, k: int) -> tuple[np.ndarray, np.ndarray]:
    gain = gains(scale, contract)
    ideal = np.zeros(sample.queries)
    slope_residual = np.zeros(len(sample.pi))
    counts = []
    for j in np.flatnonzero(scale > 0):
        count, sd, seen, residual = sample.counts((scale >= scale[j]).astype(float))
        counts.append([count, sd, seen, residual, gain[j] - (gain[j - 1] if j > 0 else 0.0)])
    for i in range(len(counts) - 2, -1, -1):  # non-increasing in the grade: raised to the next grade's count
        counts[i][0] = np.maximum(counts[i][0], counts[i + 1][0])
    for count, sd, seen, residual, step in counts:
        ideal += step * ideal_area(count, k)
        slope_residual += step * _secant(count, sd, seen, k)[sample.query] * residual[:-1]
    value = _ratio(dcg, ideal)
    return value, (z_dcg - value[:, sample.query] * slope_residual[None, :]) * _inverse(ideal)[sample.query][None, :]


def _average_precision(ranks: RunRanks, sample: Sample, contract: EvaluationContract, size: int,
                       queries: int) -> tuple[np.ndarray, np.ndarray]:
    relevant = (sample.scale >= contract.rel_level).astype(float)
    estimated, residual = sample.estimated(relevant)
    count = sample.counts(relevant)[0]
    x = estimated[ranks.position]  # runs x queries x ranks
    rank = np.arange(1, ranks.depth + 1, dtype=np.float64)
    before = np.cumsum(x, axis=2) - x
    numerator = (x * (1.0 + before) / rank).sum(axis=2)
    point = sample.plug_in(relevant)[ranks.position]
    after = np.cumsum((point / rank)[:, :, ::-1], axis=2)[:, :, ::-1] - point / rank
    slope = (1.0 + np.cumsum(point, axis=2) - point) / rank + after  # dN/dx at each rank, at the point values
    value = _ratio(numerator, count)
    # the slopes at the point values (x~ itself, with its 1/pi, would swing them), over the estimate's own R~
    point_count = np.bincount(sample.query, weights=sample.plug_in(relevant)[:-1], minlength=sample.queries)
    point_value = _ratio((point * (1.0 + np.cumsum(point, axis=2) - point) / rank).sum(axis=2), point_count)
    runs = ranks.position.shape[0]
    gradient = np.zeros((runs, size + 1))
    gradient[np.arange(runs)[:, None, None], ranks.position] = slope
    z = residual[None, :size] * (gradient[:, :size] - point_value[:, sample.query]) * _inverse(count)[
        sample.query][None, :]
    return value, z


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` per query (runs x queries over queries), 0 where the denominator is 0."""
    return np.divide(numerator, denominator[None, :], out=np.zeros_like(numerator), where=denominator[None, :] > 0)


def _inverse(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0, 1.0 / np.where(values > 0, values, 1.0), 0.0)
