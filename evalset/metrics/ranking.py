"""Turning a run into rankings: the declared tie rule, duplicates, positions.

Every stage that needs "the top k of a run" (scoring, pooling) orders it here, so that a pool and a score
always see the same ranking.

Tie rules (score descending first, always):

``trec``
    doc id descending (byte order), as trec_eval does, so that published figures reproduce. Like trec_eval,
    which stores scores as 32-bit floats, scores are compared at single precision under this rule: two
    scores that differ only beyond float32 precision are a tie.
``run``
    the run's own order: its rank column, then its line order.
``docid``
    doc id ascending.
``expected``
    ranked like ``trec`` here; the metrics engine then scores the expectation over all orders of each
    group of tied documents (McSherry and Najork, ECIR 2008).

A document repeated in one query's ranking counts once, at its first position in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.contract import TIE_RULES, TieRule
from evalset.keys import as_string_array, repeated_rows, row_hash, string_keys


@dataclass(frozen=True)
class OrderedRun:
    """A run in evaluation order, as flat numpy arrays (one entry per kept row).

    ``query_code`` indexes ``query_ids`` (the run's queries in byte order); ``doc_key`` holds exact
    order-preserving keys of the doc ids (:func:`evalset.keys.string_keys`) and ``key_hash`` the rows' hashes;
    ``position`` is the 0-based rank within the query; ``row`` is each entry's row in the run as given.
    """

    query_ids: pd.Index
    query_code: np.ndarray
    doc_key: np.ndarray
    key_hash: np.ndarray
    doc_id: pa.Array
    score: np.ndarray
    position: np.ndarray
    row: np.ndarray
    duplicates_removed: int

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
    return np.arange(len(codes), dtype=np.int32) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))


def query_codes(query_id) -> tuple[pd.Index, np.ndarray]:
    """The distinct query ids in byte order, and each row's index into them."""
    array = as_string_array(query_id)
    starts = np.zeros(min(len(array), 1), dtype=np.int64)
    if len(array) > 1:
        change = pc.not_equal(array.slice(1), array.slice(0, len(array) - 1)).to_numpy(zero_copy_only=False)
        starts = np.r_[0, np.flatnonzero(change) + 1]
    heads = array.take(pa.array(starts)).to_pylist()
    grouped = len(set(heads)) == len(heads)  # each query's rows are contiguous (most runs): no hashing of every row
    if grouped:
        names = np.array(heads, dtype=object)
    else:
        encoded = pc.dictionary_encode(array)
        names = np.array(encoded.dictionary.to_pylist(), dtype=object)
    order = np.argsort(np.array([name.encode() for name in names], dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order))
    if grouped:
        return pd.Index(names[order], dtype=object), np.repeat(rank, np.diff(np.r_[starts, len(array)]))
    return pd.Index(names[order], dtype=object), rank[encoded.indices.to_numpy(zero_copy_only=False)]


def _tie_keys(run: pd.DataFrame, doc_key: np.ndarray, ties: TieRule) -> list[np.ndarray]:
    """Keys that order tied rows (first key first), indexed by the run's rows as given."""
    if ties == "run":
        return [run["rank"].to_numpy(dtype=np.int64)] if "rank" in run else []
    if ties == "docid":
        return list(doc_key.T)
    return [~word for word in doc_key.T]  # doc id descending: trec, and a fixed order for expected


def _break_ties(row: np.ndarray, query_code: np.ndarray, score: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    """Reorder, in place, each block of ``row`` tied on (query, score) by ``keys``; returns the positions of the
    tied rows (empty when nothing moved)."""
    nothing = np.zeros(0, dtype=np.int64)
    if len(row) < 2 or not keys:
        return nothing
    same = (query_code[1:] == query_code[:-1]) & (score[1:] == score[:-1])
    tied = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    if len(tied) == 0:
        return nothing
    # block labels over the tied rows alone: a new block where the next tied row is not tied to the previous
    block = np.cumsum(np.r_[True, ~((np.diff(tied) == 1) & same[tied[:-1]])])
    subset = row[tied]
    order = np.lexsort([*(key[subset] for key in reversed(keys)), block])
    if np.all(order == np.arange(len(order))):
        return nothing
    row[tied] = subset[order]
    return tied


def order_run(run: pd.DataFrame, ties: TieRule = "trec", dedupe: bool = True) -> OrderedRun:
    """Order a run (from :func:`evalset.tables.read_run`) for evaluation under a tie rule.

    Each query's rows are contiguous (in the run's query order when it already groups them, else in byte
    order of the query ids); within a query, score descending, then the tie rule.
    Duplicate (query, doc) rows after the first are removed and counted (``dedupe=False`` leaves that to a
    caller that finds them in its own join, see :func:`evalset.keys.join`).
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; expected one of {', '.join(TIE_RULES)}")
    query_ids, query_code = query_codes(run["query_id"])
    doc_id = as_string_array(run["doc_id"])
    (doc_key,) = string_keys(doc_id)
    score = run["score"].to_numpy(dtype=np.float64)

    # trec_eval stores scores as C floats; comparing at that precision reproduces its order exactly.
    order_score = score.astype(np.float32) if ties == "trec" else score
    row = np.arange(len(run))
    if _grouped_by_query_and_sorted(query_code, order_score, len(query_ids)):
        # only tied rows move, within their query: permute just those
        tied = _break_ties(row, query_code, order_score, _tie_keys(run, doc_key, ties))
        if len(tied):
            score = score.copy()  # a view of the caller's frame; doc_key is ours
            doc_key[tied], score[tied] = doc_key[row[tied]], score[row[tied]]
    else:
        row = np.lexsort((-order_score, query_code))  # stable: tied rows keep their line order
        _break_ties(row, query_code[row], order_score[row], _tie_keys(run, doc_key, ties))
        query_code, doc_key, score = query_code[row], doc_key[row], score[row]
    del order_score

    hashes = row_hash(query_code, doc_key)
    repeated = repeated_rows(query_code, doc_key, hashes) if dedupe else np.zeros(len(query_code), dtype=bool)
    removed = int(repeated.sum())
    if removed:
        keep = ~repeated
        query_code, doc_key, score, row, hashes = query_code[keep], doc_key[keep], score[keep], row[keep], hashes[keep]
    return OrderedRun(
        query_ids=query_ids,
        query_code=query_code,
        doc_key=doc_key,
        key_hash=hashes,
        doc_id=doc_id,
        score=score,
        position=position_in_group(query_code),
        row=row,
        duplicates_removed=removed,
    )


def top_k(run: pd.DataFrame, k: int, ties: TieRule = "trec") -> pd.DataFrame:
    """The first ``k`` documents of each query under the tie rule, as ``query_id, doc_id, score, rank``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    ordered = order_run(run, ties)
    frame = ordered.to_frame()
    return frame[ordered.position < k].reset_index(drop=True)
