"""Turning a run into rankings: the declared tie rule, duplicates, positions.

Every stage that needs "the top k of a run" (scoring, pooling) orders it here, so that a pool and a score
always see the same ranking.

Tie rules (score descending first, always):

``trec``
    doc id descending (byte order), as trec_eval does, so that published figures reproduce. Scores are compared
    as doubles, as trec_eval 10 does; trec_eval 9 stored them as 32-bit floats, so that two scores differing only
    beyond float32 precision were a tie: ``single_precision=True`` (the engine's ``trec_eval_version=9``)
    compares them so under this rule.
``run``
    the run's own order: its rank column, then its line order.
``docid``
    doc id ascending.
``expected``
    ranked like ``trec`` here; the metrics engine then scores the expectation over all orders of each
    group of tied documents (McSherry and Najork, ECIR 2008). A stage that needs one strict order (a top k to
    pool or read) ranks under :func:`strict_ties` instead, which is ``trec``.

A document repeated in one query's ranking counts once, at its first position in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from evalset.contract import TIE_RULES, TieRule
from evalset.params import POSITIVE_INT, check
from evalset.speed.keys import query_codes, repeated_rows, string_keys
from evalset.speed.parallel import row_blocks
from evalset.speed.strings import string_column


@dataclass(frozen=True)
class OrderedRun:
    """A run in evaluation order, as flat numpy arrays (one entry per kept row).

    ``query_code`` indexes ``query_ids`` (the run's queries in byte order); ``doc_key`` holds exact
    order-preserving keys of the doc ids (:func:`evalset.speed.keys.string_keys`). ``row`` (each entry's row in the
    run as given), ``score`` and ``position`` (the 0-based rank within the query) are computed on first use:
    scoring needs them only for the few judged rows.
    """

    query_ids: pd.Index
    query_code: np.ndarray
    doc_key: np.ndarray
    doc_id: pa.ChunkedArray
    duplicates_removed: int
    run_score: np.ndarray  # the scores of the run as given
    order: np.ndarray | None = None  # the row of each entry before ``moved``; None: the run's own order
    moved: tuple[np.ndarray, np.ndarray] | None = None  # (entries, their rows): tied rows that changed places
    kept: np.ndarray | None = None  # the entries kept after removing repeated documents; None: all

    @cached_property
    def row(self) -> np.ndarray:
        row = np.arange(len(self.run_score)) if self.order is None else self.order.copy()
        if self.moved is not None:
            row[self.moved[0]] = self.moved[1]
        return row if self.kept is None else row[self.kept]

    @cached_property
    def score(self) -> np.ndarray:
        if self.order is None and self.kept is None:
            if self.moved is None or np.array_equal(self.run_score[self.moved[0]], self.run_score[self.moved[1]]):
                return self.run_score
            score = self.run_score.copy()
            score[self.moved[0]] = self.run_score[self.moved[1]]
            return score
        return self.run_score[self.row]

    @cached_property
    def position(self) -> np.ndarray:
        return position_in_group(self.query_code)

    def to_frame(self) -> pd.DataFrame:
        """The ordered run as ``query_id, doc_id, score, rank`` (rank 1-based, after the tie rule)."""
        return pd.DataFrame({
            "query_id": self.query_ids.to_numpy()[self.query_code],
            "doc_id": self.doc_id.take(pa.array(self.row)).to_pandas(),
            "score": self.score,
            "rank": self.position + 1,
        })


def _grouped_by_query_and_sorted(query_code: np.ndarray, score: np.ndarray, queries: int) -> bool:
    """True when each query's rows are contiguous and in non-increasing score order (most runs are)."""
    if len(query_code) < 2:
        return True
    same_query = query_code[1:] == query_code[:-1]
    contiguous = np.count_nonzero(~same_query) == queries - 1
    return contiguous and not np.any(same_query & (score[1:] > score[:-1]))


def position_in_group(codes: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal consecutive ``codes``."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]).astype(np.int32)
    position = np.repeat(starts, np.diff(np.r_[starts, len(codes)]))
    for start, stop in row_blocks(len(codes)):
        np.subtract(np.arange(start, stop, dtype=np.int32), position[start:stop], out=position[start:stop])
    return position


def by_query_highest_first(query_code: np.ndarray, grade: np.ndarray,
                           rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (query, grade) pairs of ``rows`` (a mask of positive grades) sorted by query, the highest grade first:
    one int64 key of both, sorted in place (half the memory and time of a lexsort and two gathers), or a lexsort
    for grades of 2^32 and more."""
    if not rows.any() or grade.max() >= 2**32:
        order = np.lexsort((-grade[rows], query_code[rows]))
        return query_code[rows][order], grade[rows][order]
    key = query_code[rows].astype(np.int64)
    key <<= 32
    low = grade[rows]
    np.subtract(2**32 - 1, low, out=low)
    key |= low
    del low
    key.sort()
    return (key >> 32).astype(query_code.dtype), (2**32 - 1) - (key & (2**32 - 1))


TieKeys = Callable[[np.ndarray], list[np.ndarray]]


def _tie_keys(run: pd.DataFrame, doc_key: np.ndarray, ties: TieRule) -> TieKeys | None:
    """The keys that order tied rows (first key first), for given rows of the run; None: no such keys."""
    if ties == "run":
        rank = run["rank"].to_numpy(dtype=np.int64) if "rank" in run else None
        return None if rank is None else lambda rows: [rank[rows]]
    if ties == "docid":
        return lambda rows: list(doc_key[rows].T)
    return lambda rows: [~word for word in doc_key[rows].T]  # doc id descending: trec, and fixed for expected


def _break_ties(query_code: np.ndarray, score: np.ndarray, keys: TieKeys | None,
                row: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Order each block of entries tied on (query, score) by ``keys``: returns the tied entries and their
    rows in the new order (both empty when nothing moves). ``row``: each entry's row in the run (default:
    the entry itself)."""
    nothing = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if len(query_code) < 2 or keys is None:
        return nothing
    same = query_code[1:] == query_code[:-1]
    same &= score[1:] == score[:-1]
    tied = np.flatnonzero(same)
    if len(tied) == 0:
        return nothing
    tied = np.union1d(tied, tied + 1)
    # block labels over the tied rows alone: a new block where the next tied row is not tied to the previous
    block = np.cumsum(np.r_[True, ~((np.diff(tied) == 1) & same[tied[:-1]])])
    subset = tied if row is None else row[tied]
    order = np.lexsort([*reversed(keys(subset)), block])
    if np.all(order == np.arange(len(order))):
        return nothing
    return tied, subset[order]


def order_run(run: pd.DataFrame, ties: TieRule = "trec", dedupe: bool = True,
              single_precision: bool = False) -> OrderedRun:
    """Order a run (from :func:`evalset.io.trec.read_run`) for evaluation under a tie rule.

    Each query's rows are contiguous (in the run's query order when it already groups them, else in byte
    order of the query ids); within a query, score descending, then the tie rule.
    Duplicate (query, doc) rows after the first are removed and counted (``dedupe=False`` leaves that to a
    caller that finds them in its own join, see :func:`evalset.speed.keys.join`). ``single_precision``: under
    ``trec``, compare the scores as trec_eval 9 did (module docstring).
    """
    check("the tie rule", ties, TIE_RULES)
    query_ids, query_code = query_codes(run["query_id"])
    doc_id = string_column(run["doc_id"])
    (doc_key,) = string_keys(doc_id)
    score = run["score"].to_numpy(dtype=np.float64)

    order_score = score.astype(np.float32) if ties == "trec" and single_precision else score
    tie_keys = _tie_keys(run, doc_key, ties)
    order, moved, kept = None, None, None
    if _grouped_by_query_and_sorted(query_code, order_score, len(query_ids)):
        # only tied rows move, within their query: permute just those
        tied, rows = _break_ties(query_code, order_score, tie_keys)
        if len(tied):
            moved = tied, rows
            doc_key[tied] = doc_key[rows]  # doc_key is ours
    else:
        order = np.lexsort((-order_score, query_code))  # stable: tied rows keep their line order
        tied, rows = _break_ties(query_code[order], order_score[order], tie_keys, order)
        order[tied] = rows
        query_code, doc_key = query_code[order], doc_key[order]
    del order_score

    if dedupe:
        repeated = repeated_rows(query_code, doc_key)
        if repeated.any():
            kept = np.flatnonzero(~repeated)
            query_code, doc_key = query_code[kept], doc_key[kept]
    return OrderedRun(
        query_ids=query_ids,
        query_code=query_code,
        doc_key=doc_key,
        doc_id=doc_id,
        duplicates_removed=len(run) - len(query_code),
        run_score=score,
        order=order,
        moved=moved,
        kept=kept,
    )


def top_k(run: pd.DataFrame, k: int, ties: TieRule = "trec") -> pd.DataFrame:
    """The first ``k`` documents of each query under the tie rule, as ``query_id, doc_id, score, rank``."""
    k = check("k", k, POSITIVE_INT)
    ordered = order_run(run, ties)
    frame = ordered.to_frame()
    return frame[ordered.position < k].reset_index(drop=True)


def strict_ties(ties: TieRule) -> TieRule:
    """The tie rule of one strict order for a contract's rule: ``expected`` scores an expectation over the orders
    of tied documents, so a stage that needs one order (the top k it pools or reads) takes ``trec``'s; any other
    rule is its own."""
    return "trec" if ties == "expected" else ties
