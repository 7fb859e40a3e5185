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

from evalset.contract import TIE_RULES, TieRule


@dataclass(frozen=True)
class OrderedRun:
    """A run in evaluation order, as flat numpy arrays (one entry per kept row).

    ``query_code`` indexes ``query_ids``; ``doc_code`` indexes ``doc_ids``; ``position`` is the 0-based rank
    within the query; ``query_start`` holds, per query present, the offset of its first row.
    """

    query_ids: pd.Index
    doc_ids: pd.Index
    query_code: np.ndarray
    doc_code: np.ndarray
    score: np.ndarray
    position: np.ndarray
    duplicates_removed: int

    def to_frame(self) -> pd.DataFrame:
        """The ordered run as ``query_id, doc_id, score, rank`` (rank 1-based, after the tie rule)."""
        return pd.DataFrame({
            "query_id": pd.Categorical.from_codes(self.query_code, categories=self.query_ids),
            "doc_id": pd.Categorical.from_codes(self.doc_code, categories=self.doc_ids),
            "score": self.score,
            "rank": self.position + 1,
        })


def _lexical_rank(categories: pd.Index) -> np.ndarray:
    """For each category, its position in byte (code point) order."""
    order = np.argsort(categories.to_numpy(dtype=object).astype(str), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _is_sorted(keys: list[np.ndarray]) -> bool:
    """True when rows are already in lexicographic ascending order of ``keys`` (primary key first)."""
    if len(keys[0]) < 2:
        return True
    undecided = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in keys:
        step = np.diff(key)
        if np.any(undecided & (step < 0)):
            return False
        undecided &= step == 0
    return not np.any(undecided)


def position_in_group(codes: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal consecutive ``codes``."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return np.arange(len(codes)) - np.repeat(starts, np.diff(np.r_[starts, len(codes)]))


def order_run(run: pd.DataFrame, ties: TieRule = "trec") -> OrderedRun:
    """Order a run (from :func:`evalset.tables.read_run`) for evaluation under a tie rule.

    Queries come in ascending byte order of their ids; within a query, score descending, then the tie rule.
    Duplicate (query, doc) rows after the first are removed and counted.
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; expected one of {', '.join(TIE_RULES)}")
    query = run["query_id"]
    doc = run["doc_id"]
    if not isinstance(query.dtype, pd.CategoricalDtype):
        query = query.astype(str).astype("category")
    if not isinstance(doc.dtype, pd.CategoricalDtype):
        doc = doc.astype(str).astype("category")
    query_ids = query.cat.categories
    query_rank = _lexical_rank(query_ids)
    query_order = np.argsort(query_rank)
    query_code = query_rank[query.cat.codes.to_numpy()]
    doc_code = doc.cat.codes.to_numpy().astype(np.int64)
    score = run["score"].to_numpy(dtype=np.float64)

    # trec_eval stores scores as C floats; comparing at that precision reproduces its order exactly.
    order_score = score.astype(np.float32).astype(np.float64) if ties == "trec" else score
    if ties == "run":
        secondary = [run["rank"].to_numpy(dtype=np.int64)] if "rank" in run else []
        keys = [query_code, -order_score, *secondary, np.arange(len(run))]
    else:
        doc_rank = _lexical_rank(doc.cat.categories)[doc_code]
        keys = [query_code, -order_score, doc_rank if ties == "docid" else -doc_rank]
    if not _is_sorted(keys):
        order = np.lexsort(keys[::-1])
        query_code, doc_code, score = query_code[order], doc_code[order], score[order]

    duplicate = pd.Series(query_code * max(len(doc.cat.categories), 1) + doc_code).duplicated().to_numpy()
    removed = int(duplicate.sum())
    if removed:
        keep = ~duplicate
        query_code, doc_code, score = query_code[keep], doc_code[keep], score[keep]

    return OrderedRun(
        query_ids=query_ids[query_order],
        doc_ids=doc.cat.categories,
        query_code=query_code,
        doc_code=doc_code,
        score=score,
        position=position_in_group(query_code),
        duplicates_removed=removed,
    )


def top_k(run: pd.DataFrame, k: int, ties: TieRule = "trec") -> pd.DataFrame:
    """The first ``k`` documents of each query under the tie rule, as ``query_id, doc_id, score, rank``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    ordered = order_run(run, ties)
    frame = ordered.to_frame()
    return frame[ordered.position < k].reset_index(drop=True)
