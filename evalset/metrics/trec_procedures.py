"""Measures defined by trec_eval's own procedure, computed as its C code does for all queries at once: interpolated
precision at a recall level (``iprec@r``, trec_eval's ``iprec_at_recall``, m_iprec_at_recall.c), its 11-point
average (``11pt_avg``, m_11pt_avg.c) and inferred AP (``infap``, m_infap.c).

Interpolated precision at recall r. trec_eval turns r into a count c of relevant documents (R the query's relevant
documents, judged at the relevance level or above) and takes the highest precision at any rank from the c-th
relevant document retrieved on: the maximum of j / rank_j over j >= c (over every j when c = 0), where rank_j is
the rank of the j-th relevant document retrieved; 0 when fewer than c relevant documents are retrieved. The count
is where trec_eval's versions differ (:data:`TREC_EVAL_VERSIONS`):

- trec_eval 9 (9.0.8, and pytrec_eval, which builds it): ``c = (long) (r * R + 0.9)``, r*R + 0.9 truncated;
- trec_eval 10: ``c = lround(r * R)``, r*R rounded half away from zero (its comment: "In v9 and prior, this was
  done by adding 0.9 and casting to an integral type, which is not platform-safe").

They differ when the fractional part of r*R is in [0.1, 0.5): R = 4 at r = 0.3 is c = 2 under 9, c = 1 under 10.
11pt_avg is the mean of iprec at 0.0, 0.1, ..., 1.0, with the same count. Both are 0 for a query with no relevant
document retrieved; a recall level is printed by trec_eval as ``%3.2f`` (``iprec_at_recall_0.33`` for 0.333, the
level itself used unrounded), in both versions.

Inferred AP (Yilmaz & Aslam, CIKM 2006). A qrels grade below 0 marks a document pooled but not judged; a document
not in the qrels is outside the pool. For the relevant document at 0-based position j (of the ranking, condensed
under ``unjudged="condensed"`` as trec_eval's ``-J`` condenses it), with a relevant, n judged non-relevant and u
pooled-but-unjudged documents above it::

    term = 1                                                                   if j = 0
    term = 1/(j+1) + j/(j+1) * ((a + n + u)/j) * ((a + eps)/(a + n + 2 eps))   otherwise, eps = 0.00001

and infAP = (sum of the terms) / R. With every pooled document judged (no negative grade) it is AP up to the
smoothing eps. The same in trec_eval 9 and 10.

These measures take no expectation over tied orders: under ``ties=expected`` they are refused.
"""

from __future__ import annotations

import numpy as np

from evalset.errors import InputError
from evalset.metrics.prepared import MeasureInput

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The recall levels of 11pt_avg (trec_eval's, as its C literals)."""
INFAP_EPSILON = 0.00001
"""trec_eval's INFAP_EPSILON (trec_eval.h)."""


def relevant_count(recall: float, relevant: np.ndarray, version: int) -> np.ndarray:
    """The count of relevant documents trec_eval ``version`` reads recall level ``recall`` as, per query
    (``relevant``: R): module docstring. In float64 as C computes it (a double times a long)."""
    scaled = recall * relevant
    if version == 9:
        return np.floor(scaled + 0.9)
    whole = np.floor(scaled)
    return whole + (scaled - whole >= 0.5)


def _refuse_expected_ties(x: MeasureInput) -> None:
    if x.prepared.contract.ties == "expected":
        raise InputError(f"{x.measure} has no expectation over tied orders: score it with -c ties=trec, run or docid")


def _starts(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each query's run of rows starts, and each row's query run (rows are grouped by query)."""
    new = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, dtype=bool)
    return np.flatnonzero(new), np.cumsum(new) - 1


def _suffix_max(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The maximum of ``values`` from each row to the end of its group (groups contiguous), exactly: values become
    their rank among the distinct values, offset per group so that one running maximum never crosses a group."""
    if not len(values):
        return values
    levels, code = np.unique(values, return_inverse=True)
    key = (group[-1] - group) * len(levels) + code  # later groups get smaller offsets: reversed, they ascend
    best = np.maximum.accumulate(key[::-1])[::-1] % len(levels)
    return levels[best]


class Ladder:
    """Per query, the highest precision from each relevant document retrieved on (in rank order), where each
    query's relevant documents start, and how many were retrieved."""

    def __init__(self, x: MeasureInput) -> None:
        _refuse_expected_ties(x)
        rows = x.rows
        relevant = np.flatnonzero(rows.expected_relevant > 0)
        query = rows.query[relevant]
        starts, group = _starts(query)
        count = np.arange(len(query)) - starts[group] + 1.0
        self.best = _suffix_max(count / (rows.position[relevant] + 1.0), group)
        self.first = np.zeros(len(x.prepared.query_ids), dtype=np.int64)
        self.first[query[starts]] = starts
        self.retrieved = np.bincount(query, minlength=len(x.prepared.query_ids))
        self.relevant = x.relevant
        self.version = x.trec_eval_version

    def at(self, recall: float) -> np.ndarray:
        """Interpolated precision at ``recall`` of every judged query."""
        count = relevant_count(recall, self.relevant, self.version).astype(np.int64)
        reached = (count <= self.retrieved) & (self.retrieved > 0)
        if not reached.any():
            return np.zeros(len(reached))
        where = np.where(reached, self.first + np.maximum(count, 1) - 1, 0)
        return np.where(reached, self.best[where], 0.0)


def iprec(x: MeasureInput) -> np.ndarray:
    """``iprec@r``: interpolated precision at the measure's recall level."""
    return Ladder(x).at(x.measure.param("recall"))


def eleven_point_average(x: MeasureInput) -> np.ndarray:
    """``11pt_avg``: the mean of iprec at :data:`ELEVEN_POINTS`, summed from 1.0 down as trec_eval adds them."""
    ladder = Ladder(x)
    total = np.zeros(len(x.prepared.query_ids))
    for recall in reversed(ELEVEN_POINTS):  # 11 levels, each over every query at once
        total += ladder.at(recall)
    return total / len(ELEVEN_POINTS)


def infap(x: MeasureInput) -> np.ndarray:
    """``infap``: inferred AP (module docstring), the terms summed in rank order as trec_eval does."""
    _refuse_expected_ties(x)
    rows = x.rows
    starts, group = _starts(rows.query)
    relevant = rows.expected_relevant
    before = np.r_[0.0, np.cumsum(relevant)]
    above = before[:-1] - before[starts][group]  # relevant documents above (the rows are the judged documents)
    nonrelevant = np.arange(len(relevant)) - starts[group] - above
    j = rows.position.astype(np.float64)
    term = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((above + nonrelevant + rows.pooled_above) / j)
            * ((above + INFAP_EPSILON) / (above + nonrelevant + 2 * INFAP_EPSILON)))
    return x.per_query(np.where(j == 0, 1.0, term) * relevant) / x.relevant
