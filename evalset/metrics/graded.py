"""The computations of the graded and user-model measures (DCG, ERR, RBP and its residual) and of set F, over the
engine's per-row arrays (:class:`evalset.metrics.prepared.MeasureInput`) for all queries at once.

Their conventions are the rows of the table in :mod:`evalset.metrics.measures`, which registers them; in short:

* DCG@k = sum of gain(grade) / log2(rank + 1) over the top k (the contract's gain; nDCG's numerator).
* ERR@k (Chapelle et al., CIKM 2009) = sum over ranks r <= k of R_r / r * prod_{i<r} (1 - R_i), with
  R_i = (2^g_i - 1) / 2^g_max and g_max = max(4, the query's highest grade): gdeval.pl's fixed 4 (the TREC Web
  track's scale, its ``$MAX_JUDGMENT``), raised only for a query whose grades go above it, so that R stays below
  1 (per query, as every value here: a query's value depends on its own judgments alone).
* RBP(p)@k (Moffat & Zobel, TOIS 2008) = (1 - p) sum over ranks r <= k of p^(r-1) gain_r, with gain the grade
  over the query's highest grade (when that is above 1: trec_eval's normalisation), or 1 for a relevant document
  with ``rel`` given (binary RBP).
* The RBP residual: the weight RBP gives to the places it does not know, the unjudged places within the depth and
  every place beyond it (p^depth); the depth is k, or the ranking's length when the ranking is shorter, so that it
  is ``1 - (1 - p) sum over judged places r <= k of p^(r-1)``. A query the run misses has residual 1 (trec_eval
  ``-c`` prints 0, as for every measure), and p^n counts even when no place is unjudged (trec_eval's rbp_resid is
  0 then: it adds p^n only to a ranking with an unjudged document).
* ir_measures' graded RBP (its trectools provider) takes the grade itself as the gain, so that a 0-3 scale gives
  values above 1; evalset follows trec_eval, whose gains stay in [0, 1] (Moffat & Zobel's model).
* set P: relevant retrieved / retrieved (0 when nothing is).
* F@k: the F measure of the set of the top k documents (of the whole ranking without k), in trec_eval's form and
  arithmetic (1 + beta) P R / (beta P + R) (equal to (1 + beta) relevant retrieved / (beta R + documents retrieved),
  but not always to the last bit).
"""

from __future__ import annotations

import numpy as np

from evalset.errors import InputError
from evalset.metrics.prepared import MeasureInput

DEFAULT_PERSISTENCE = 0.8
"""RBP's p when none is given (ir_measures' default; trec_eval's is 0.9)."""
ERR_TOP_GRADE = 4
"""ERR's g_max unless the query has a higher grade (gdeval.pl's ``$MAX_JUDGMENT``)."""


def _highest_gain(x: MeasureInput) -> np.ndarray:
    """The highest gain of each judged query's judgments: its first ideal gain (0 for a query without any)."""
    prepared = x.prepared
    return np.bincount(prepared.ideal_query_code, weights=prepared.ideal_gain * (prepared.ideal_position == 0),
                       minlength=len(prepared.query_ids))


def dcg(x: MeasureInput) -> np.ndarray:
    """DCG of every judged query under the contract's gain."""
    return x.per_query(x.rows.expected_gain / np.log2(x.rows.position + 2.0))


def err(x: MeasureInput) -> np.ndarray:
    """ERR of every judged query; the rows' gains are 2^g - 1 (the kind fixes ``gain = exponential``)."""
    if x.prepared.contract.ties == "expected":
        raise InputError("err cannot be scored under ties=expected: ERR is not linear in the grades, so the mean "
                         "over the orders of a tie group is not its value at the mean grade; use ties=trec, run "
                         "or docid")
    scale = np.maximum(2.0**ERR_TOP_GRADE, _highest_gain(x) + 1.0)  # 2^g_max: the highest gain is 2^g - 1
    stop = x.rows.expected_gain * x.within / scale[x.rows.query]  # R_i; a row outside the cutoff stops no one
    going_on = _exclusive_product(1.0 - stop, x.rows.query)  # prod_{i<r} (1 - R_i) within each query
    return x.per_query(stop * going_on / (x.rows.position + 1.0))


def _exclusive_product(factors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The product of the factors of the rows above each row of its query (1 on a query's first row).

    A scan by doubling (Hillis and Steele): step d multiplies each row by the partial product d rows above it in
    its query, for d = 1, 2, 4, ... up to the longest query, so a row's value is computed from its own query's
    rows alone, in an order fixed by its place in the query: the same whichever queries are scored with it (the
    blocks of a streamed run)."""
    if len(factors) == 0:
        return factors
    first = np.r_[True, query[1:] != query[:-1]]
    place = np.arange(len(query)) - np.flatnonzero(first)[np.cumsum(first) - 1]
    product = np.where(first, 1.0, np.r_[1.0, factors[:-1]])
    step = 1
    while step <= place.max():
        reach = np.flatnonzero(place >= step)
        scanned = product.copy()
        scanned[reach] = product[reach] * product[reach - step]
        product, step = scanned, step * 2
    return product


def _persistence(x: MeasureInput) -> float:
    return x.measure.param("p", DEFAULT_PERSISTENCE)


def rbp(x: MeasureInput) -> np.ndarray:
    """RBP of every judged query: graded (the grade over the query's highest) or, with ``rel``, binary."""
    p = _persistence(x)  # p^(r-1) by repeated multiplication and (1 - p) outside the sum, as trec_eval's m_rbp.c
    weight = np.multiply.accumulate(np.r_[1.0, np.full(int(x.rows.position.max(initial=0)), p)])[x.rows.position]
    if x.measure.param("rel") is not None:
        return (1.0 - p) * x.per_query(x.rows.expected_relevant * weight)
    highest = _highest_gain(x)  # the highest grade: the kind fixes linear gains
    return (1.0 - p) * x.per_query(x.rows.expected_gain / np.maximum(highest, 1.0)[x.rows.query] * weight)


def rbp_residual(x: MeasureInput) -> np.ndarray:
    """RBP's residual of every judged query: 1 - the weight of its judged places within the depth."""
    p = _persistence(x)
    weight = (1.0 - p) * p ** x.rows.position.astype(np.float64)
    return 1.0 - x.per_query(weight * x.rows.expected_judged)


def set_f(x: MeasureInput) -> np.ndarray:
    """F of the top k (trec_eval's ``set_F``, beta its x): (1 + beta) P R / (beta P + R), 0 without a hit, in
    trec_eval's arithmetic (at an exact half, 11/32 = 0.34375, the rounded form (1 + beta) relevant retrieved /
    (beta R + set size) lands on the other side: 0.3438 where trec_eval prints 0.3437)."""
    beta = x.measure.param("beta", 1.0)
    size = x.rows.retrieved if x.cutoff is None else np.minimum(x.rows.retrieved, x.cutoff)
    found = x.per_query(x.rows.expected_relevant)
    hit = found > 0
    precision = np.divide(found, size, out=np.zeros(len(found)), where=hit)
    recall = np.divide(found, x.relevant, out=np.zeros(len(found)), where=hit)
    denominator = beta * precision + recall
    return np.divide((beta + 1.0) * precision * recall, denominator, out=np.zeros(len(found)), where=hit)


def set_p(x: MeasureInput) -> np.ndarray:
    """Precision of the whole ranking (trec_eval's ``set_P``): 0 for a query with nothing retrieved."""
    found = x.per_query(x.rows.expected_relevant)
    return np.divide(found, x.rows.retrieved, out=np.zeros(len(found)), where=x.rows.retrieved > 0)
