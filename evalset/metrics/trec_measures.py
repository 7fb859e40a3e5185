"""The measures trec_eval 10 prints under ``-m all_trec`` that are trec_eval's own (m_*.c), computed as its C code
does for all queries at once, and registered here under our names with trec_eval's as aliases.

Their conventions (rows of the table in :mod:`evalset.metrics.measures`), with R the query's relevant documents at
the relevance level, n the ranking's length, ranks from 1, the gain of a judged document its grade (trec_eval's
default gains: ``-l`` never changes them) and an unjudged one (or one graded < 0) of gain 0 and not relevant:

* ``gm_ap`` (``gm_map``), ``gm_bpref``: a query's value is its AP / bpref; the summary over queries is geometric,
  exp(mean(log(max(v, 0.00001)))) (m_gm_map.c's MIN_GEO_MEAN; :data:`evalset.stats.strata.GEOMETRIC_FLOOR`).
  trec_eval prints no per-query line for them, and ``--format trec_eval`` none either.
* ``rprec_mult@m`` (``Rprec_mult_0.20`` ... ``_2.00``): precision at c = (long) (m R + 0.9) documents, a ranking
  shorter than c dividing by c (m_Rprec_mult.c); ``rprec_mult@1`` is R-precision.
* ``utility`` (``utility``, its default coefficients 1, -1, 0, 0): relevant retrieved - other documents retrieved
  (unjudged ones count as not relevant).
* ``binary_g`` (``binG``): 1/R sum over the relevant documents retrieved of 1 / log2(2 + documents that are not
  relevant above it), 0 when none is retrieved.
* ``graded_g`` (``G``): 1/(total gain) sum over ranks i of gain_i / log2(2 + cost_i - gained_i), gained_i the run's
  gain down to i, cost_i the sum over ranks j <= i of max(ideal gain at j, 1); undefined without gain.
* ``ndcg_rel`` (``ndcg_rel``): the mean over the query's documents of positive gain of nDCG at the rank of each
  retrieved one (nDCG over the whole ranking for each one not retrieved); undefined without gain.
* ``rndcg`` (``Rndcg``): the mean of nDCG@t over t the cumulative counts of the positive grade levels, highest
  first (the R levels), and t = n when n > (documents of positive gain) + 1 (trec_eval's implied last level, whose
  rule this follows to the letter); undefined when R = 0.
* ``relative_p@k`` (``relative_P_k``): relevant documents in the top k / min(k, R).
* ``set_relative_p`` (``set_relative_P``): relevant retrieved / min(n, R) (0 when nothing is retrieved).
* ``set_ap`` (``set_map``, ir_measures' ``SetAP``): relevant retrieved^2 / (n R) (0 when nothing is retrieved).
* ``num_nonrel_judged_ret``: judged documents retrieved that are not relevant (a count: summed over queries).
* ``rbp_resid`` (trec_eval's): RBP's residual at p = 0.9 as trec_eval computes it, p^n + (1 - p) sum over the
  unjudged ranks i of p^(i-1), and **0 when the ranking holds no unjudged document** (then p^n is left out).
  evalset's ``rbp_residual`` (p 0.8 by default, a depth k) counts p^n always: the weight beyond the ranking is
  unknown whether or not a document in it is.
* ``unjudged@k`` (``unj_k``): documents in the top k that are unjudged (not in the qrels, or graded < 0) / k; a
  ranking shorter than k has its empty places judged (trec_eval's "assumed irrelevant"), so that it is not
  1 - ``judged@k`` there, which counts them unjudged.

Powers of p are taken as trec_eval takes them (p^i by repeated multiplication) and sums run in rank order, so that
the values are trec_eval's doubles, not only its printed digits. The measures defined by a walk down the ranking
(binary_g, graded_g, ndcg_rel, rndcg, rbp_resid) take no expectation over tied orders: under ``ties=expected`` they
are refused.
"""

from __future__ import annotations

import numpy as np

from evalset.metrics.prepared import MeasureInput
from evalset.metrics.trec_procedures import _refuse_expected_ties, _starts

TREC_EVAL_PERSISTENCE = 0.9
"""trec_eval's RBP p (m_rbp.c, m_rbp_resid.c)."""


def powers(p: float, up_to: int) -> np.ndarray:
    """p^0 .. p^up_to, each the previous times p (as trec_eval's ``cur_p = cur_p * p``)."""
    return np.multiply.accumulate(np.r_[1.0, np.full(max(up_to, 0), p)])


def running_sum(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The sum of ``values`` down to each row within its query (rows grouped by query), added in rank order as a C
    loop adds them (one ``cumsum`` per query: exact where a difference of prefix sums is not)."""
    out = np.empty_like(values, dtype=np.float64)
    if not len(values):
        return out
    starts, _ = _starts(query)
    for start, end in zip(starts, np.r_[starts[1:], len(values)].astype(np.int64), strict=True):
        out[start:end] = np.cumsum(values[start:end])
    return out


def _count(x: MeasureInput, values: np.ndarray) -> np.ndarray:
    return x.per_query(values, np.ones(len(values), dtype=bool))


def rprec_mult(x: MeasureInput) -> np.ndarray:
    """Precision at (long) (m R + 0.9) documents (m_Rprec_mult.c)."""
    cut = np.floor(x.measure.param("multiple") * x.relevant + 0.9)
    return x.per_query(x.rows.expected_relevant, x.rows.position < cut[x.rows.query]) / cut


def utility(x: MeasureInput) -> np.ndarray:
    """Relevant retrieved - the other documents retrieved (trec_eval's utility at 1, -1, 0, 0)."""
    found = _count(x, x.rows.expected_relevant)
    return 1.0 * found + -1.0 * (x.rows.retrieved - found)


def relative_p(x: MeasureInput) -> np.ndarray:
    """Relevant in the top k / min(k, R)."""
    return x.per_query(x.rows.expected_relevant) / np.minimum(x.cutoff, x.relevant)


def set_relative_p(x: MeasureInput) -> np.ndarray:
    """Relevant retrieved / min(n, R); 0 when nothing is retrieved."""
    found, size = _count(x, x.rows.expected_relevant), np.minimum(x.rows.retrieved, x.relevant)
    return np.divide(found, size, out=np.zeros(len(found)), where=size > 0)


def set_ap(x: MeasureInput) -> np.ndarray:
    """Relevant retrieved^2 / (n R); 0 when nothing is retrieved."""
    found, size = _count(x, x.rows.expected_relevant), x.rows.retrieved * x.relevant
    return np.divide(found * found, size, out=np.zeros(len(found)), where=size > 0)


def num_nonrel_judged_ret(x: MeasureInput) -> np.ndarray:
    """Judged documents retrieved that are not relevant."""
    return _count(x, x.rows.expected_judged) - _count(x, x.rows.expected_relevant)


def unjudged(x: MeasureInput) -> np.ndarray:
    """Unjudged documents in the top k / k, the places past the ranking not counted."""
    return (np.minimum(x.rows.retrieved, x.cutoff) - x.per_query(x.rows.expected_judged)) / x.cutoff


def binary_g(x: MeasureInput) -> np.ndarray:
    """binG: 1/R sum over relevant retrieved of 1 / log2(3 + i - relevant so far), i the 0-based rank."""
    _refuse_expected_ties(x)
    rows = x.rows
    relevant = rows.expected_relevant
    so_far = running_sum(relevant, rows.query)
    term = np.where(relevant > 0, 1.0 / np.log2(3.0 + rows.position - so_far), 0.0)
    return _count(x, term) / x.relevant


def _ideal(x: MeasureInput) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: where its ideal gains start, how many there are (documents of positive gain), and the ideal DCG
    down to each ideal place (in the prepared qrels' ideal order)."""
    prepared = x.prepared
    count = np.bincount(prepared.ideal_query_code, minlength=len(prepared.query_ids))
    start = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    ideal = running_sum(prepared.ideal_gain / np.log2(prepared.ideal_position + 2.0), prepared.ideal_query_code)
    return start, count, ideal


def _ideal_at(values: np.ndarray, start: np.ndarray, count: np.ndarray, query: np.ndarray,
              place: np.ndarray) -> np.ndarray:
    """``values`` (per ideal place) at each query's ideal place ``place``, or its last one when ``place`` is past
    it; 0 for a query without ideal places."""
    has = count[query] > 0
    out = np.zeros(len(query))
    out[has] = values[start[query[has]] + np.minimum(place[has], count[query[has]] - 1)]
    return out


def _gains(x: MeasureInput) -> tuple[np.ndarray, np.ndarray]:
    """Each row's gain (its grade: the kinds fix linear gains) and the run's DCG down to it."""
    gain = x.rows.expected_gain
    return gain, running_sum(np.where(gain != 0, gain / np.log2(x.rows.position + 2.0), 0.0), x.rows.query)


def graded_g(x: MeasureInput) -> np.ndarray:
    """G (m_G.c): sum of gain_i / log2(2 + cost_i - gained_i) over the total gain (module docstring)."""
    _refuse_expected_ties(x)
    rows, prepared = x.rows, x.prepared
    start, count, _ = _ideal(x)
    ideal_cost = running_sum(np.maximum(prepared.ideal_gain, 1.0), prepared.ideal_query_code)
    total = np.bincount(prepared.ideal_query_code, weights=prepared.ideal_gain, minlength=len(count))
    gain = rows.expected_gain
    gained = running_sum(gain, rows.query)
    position = rows.position
    cost = (_ideal_at(ideal_cost, start, count, rows.query, position)
            + np.maximum(position - count[rows.query] + 1, 0))
    term = np.where(gain != 0, gain / np.log2(2.0 + cost - gained), 0.0)
    return np.where(total > 0, _count(x, term) / total, np.nan)


def ndcg_rel(x: MeasureInput) -> np.ndarray:
    """ndcg_rel (m_ndcg_rel.c): nDCG at each document of positive gain, averaged over them (module docstring)."""
    _refuse_expected_ties(x)
    rows = x.rows
    start, count, ideal = _ideal(x)
    gain, dcg = _gains(x)
    ideal_here = _ideal_at(ideal, start, count, rows.query, rows.position)
    term = np.divide(dcg, ideal_here, out=np.zeros(len(gain)), where=(gain > 0) & (ideal_here > 0))
    total_dcg = _count(x, np.where(gain != 0, gain / np.log2(rows.position + 2.0), 0.0))
    every = np.arange(len(count))
    full_ideal = _ideal_at(ideal, start, count, every, count)
    missed = count - _count(x, (gain > 0).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        total = _count(x, term) + (missed * total_dcg) / full_ideal
    return np.where(count > 0, np.where(total > 0, total / count, 0.0), np.nan)


def rndcg(x: MeasureInput) -> np.ndarray:
    """Rndcg (m_Rndcg.c): nDCG averaged at the R levels and, past them, at the ranking's end (module docstring)."""
    _refuse_expected_ties(x)
    rows, prepared = x.rows, x.prepared
    start, count, ideal = _ideal(x)
    queries = len(count)
    code, grade = prepared.ideal_query_code, prepared.ideal_gain
    last = np.r_[(code[1:] != code[:-1]) | (grade[1:] != grade[:-1]), True] if len(code) else np.zeros(0, bool)
    level_query, level_cut, level_ideal = code[last], prepared.ideal_position[last] + 1, ideal[last]
    retrieved = x.rows.retrieved.astype(np.int64)
    beyond = np.flatnonzero((retrieved > count + 1) & (count > 0))
    full_ideal = ideal[start[beyond] + count[beyond] - 1] if len(beyond) else np.zeros(0)
    query = np.r_[level_query, beyond].astype(np.int64)
    cut = np.r_[level_cut, retrieved[beyond]].astype(np.int64)
    ideal_at = np.r_[level_ideal, full_ideal]
    order = np.lexsort((cut, query))
    query, cut, ideal_at = query[order], cut[order], ideal_at[order]
    _, dcg = _gains(x)
    width = np.int64(max(int(retrieved.max(initial=0)), int(cut.max(initial=0)))) + 2
    key = rows.query.astype(np.int64) * width + rows.position
    sorted_rows = np.argsort(key, kind="stable")
    below = np.searchsorted(key[sorted_rows], query * width + cut, side="left") - 1  # the last row above the cut
    run_dcg = np.zeros(len(query))
    if len(key):
        row = sorted_rows[np.maximum(below, 0)]
        found = (below >= 0) & (rows.query[row] == query)
        run_dcg[found] = dcg[row[found]]
    total = np.bincount(query, weights=run_dcg / ideal_at, minlength=queries)
    return total / np.bincount(query, minlength=queries)


def rbp_resid(x: MeasureInput) -> np.ndarray:
    """trec_eval's rbp_resid at p = 0.9: p^n + (1 - p) sum of p^(i-1) over unjudged ranks i; 0 without one."""
    _refuse_expected_ties(x)
    p, rows = TREC_EVAL_PERSISTENCE, x.rows
    length = rows.retrieved.astype(np.int64)
    power = powers(p, int(length.max(initial=0)))
    offset = np.r_[0, np.cumsum(length)[:-1]].astype(np.int64)
    judged = np.zeros(int(length.sum()), dtype=bool)
    judged[offset[rows.query] + rows.position] = rows.expected_judged > 0
    place_query = np.repeat(np.arange(len(length)), length)
    place = np.arange(len(judged)) - offset[place_query]
    unj = ~judged
    weights = np.bincount(place_query[unj], weights=power[place[unj]], minlength=len(length))
    any_unjudged = np.bincount(place_query[unj], minlength=len(length)) > 0
    return np.where(any_unjudged, power[length] + (1 - p) * weights, 0.0)


def _register() -> None:
    """Register the measures of the module docstring (called once, when :mod:`evalset.metrics.measures` loads)."""
    from evalset.metrics.measures import BINARY, UNBOUNDED, MeasureKind, register

    def ap(x: MeasureInput) -> np.ndarray:
        return x.per_query(x.rows.ap_term) / x.relevant

    linear = (("gain", "linear"),)  # trec_eval's gains are the grades
    for kind in (
        MeasureKind("gm_ap", "AP, summarised by its geometric mean", cutoff="none", defined_without_relevant=False,
                    aliases=("gm_map",), trec_eval=("gm_map", None), params=BINARY, summary="geometric", compute=ap),
        MeasureKind("gm_bpref", "bpref, summarised by its geometric mean", cutoff="none",
                    defined_without_relevant=False, trec_eval=("gm_bpref", None), params=("rel",),
                    summary="geometric", compute=lambda x: x.per_query(x.rows.bpref_term) / x.relevant),
        MeasureKind("rprec_mult", "precision at a multiple of R", cutoff="none", defined_without_relevant=False,
                    trec_eval=("Rprec_mult", None), params=("multiple", *BINARY), at="multiple", compute=rprec_mult),
        MeasureKind("utility", "relevant retrieved - other retrieved", cutoff="none", defined_without_relevant=True,
                    bounds=(-float("inf"), float("inf")), trec_eval=("utility", None), params=BINARY,
                    compute=utility),
        MeasureKind("binary_g", "trec_eval's binary G", cutoff="none", defined_without_relevant=False,
                    aliases=("bing",), trec_eval=("binG", None), params=BINARY, compute=binary_g),
        MeasureKind("graded_g", "trec_eval's normalised gain G", cutoff="none", defined_without_relevant=True,
                    aliases=("g",), trec_eval=("G", None), contract=linear, compute=graded_g),
        MeasureKind("ndcg_rel", "nDCG averaged at the documents of positive gain", cutoff="none",
                    defined_without_relevant=True, trec_eval=("ndcg_rel", None), contract=linear, compute=ndcg_rel),
        MeasureKind("rndcg", "nDCG averaged at the R levels", cutoff="none", defined_without_relevant=False,
                    trec_eval=("Rndcg", None), params=("rel",), contract=linear, compute=rndcg),
        MeasureKind("relative_p", "precision relative to the best possible at k", cutoff="required",
                    defined_without_relevant=False, trec_eval=(None, "relative_P"), params=BINARY,
                    compute=relative_p),
        MeasureKind("set_relative_p", "set precision relative to the best possible", cutoff="none",
                    defined_without_relevant=False, trec_eval=("set_relative_P", None), params=BINARY,
                    compute=set_relative_p),
        MeasureKind("set_ap", "set AP: recall times set precision", cutoff="none", defined_without_relevant=False,
                    aliases=("set_map", "setap"), trec_eval=("set_map", None), params=BINARY, compute=set_ap),
        MeasureKind("num_nonrel_judged_ret", "judged non-relevant documents retrieved", cutoff="none",
                    defined_without_relevant=True, bounds=UNBOUNDED, trec_eval=("num_nonrel_judged_ret", None),
                    count=True, params=("rel",), compute=num_nonrel_judged_ret),
        MeasureKind("rbp_resid", "trec_eval's RBP residual (p = 0.9; 0 when nothing unjudged)", cutoff="none",
                    defined_without_relevant=True, trec_eval=("rbp_resid", None), compute=rbp_resid),
        MeasureKind("unjudged", "share of the top k that is unjudged", cutoff="required",
                    defined_without_relevant=True, aliases=("unj",), trec_eval=(None, "unj"), compute=unjudged),
    ):
        register(kind)


_register()
