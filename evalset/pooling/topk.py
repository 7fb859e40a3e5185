"""Every system's top k per query, stacked as integer codes, and a run file's rows that can be in its top k.

Conventions
-----------
- A system's top k is taken in the order of :func:`evalset.metrics.ranking.order_run` under the declared tie rule
  (a document repeated in a ranking counts once, at its first position), as scoring orders it.
- Query and document ids are coded in byte (code point) order, so that sorting codes sorts ids. The document ids of
  all runs are coded at once (one hash and one sort of the distinct ids).
- :func:`read_top_k` keeps, of a run file streamed in blocks of whole queries (:mod:`evalset.io.runstream`: a file
  above 64 MiB), only each query's rows that can be in its top k; the top k of those rows is the run's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.contract import reads_ranks
from evalset.errors import InputError
from evalset.io import runstream
from evalset.io.trec import read_run
from evalset.metrics.ranking import TieRule, order_run
from evalset.params import check
from evalset.pooling.spec import POOL_SPEC_RULES


def read_top_k(path: str | os.PathLike, k: int, ties: TieRule = "trec") -> pd.DataFrame:
    """A run file as :func:`evalset.io.trec.read_run` reads it, less the rows that cannot be in its top ``k`` under
    ``ties`` when it is streamed (a big file grouped by query): only each block's top k is held, never the whole
    run. A small file, or one whose queries are not grouped, is read whole."""
    rank = reads_ranks(ties)
    if not runstream.streams(path):
        return read_run(path, rank=rank)
    kept = []
    try:
        for _, block in runstream.query_blocks(path, runstream.STREAM_BLOCK_BYTES, rank=rank):
            ordered = order_run(block, ties)
            kept.append(block.iloc[np.sort(ordered.row[ordered.position < k])])
    except runstream.RunNotGrouped:
        return read_run(path, rank=rank)
    return pd.concat(kept, ignore_index=True)


@dataclass(frozen=True)
class TopK:
    """Every system's top k per query, stacked, as integer codes (what :func:`collect_top_k` returns as a frame).

    ``query_code`` indexes ``queries`` and ``doc_code`` indexes ``docs``, both sorted in byte order, so that
    sorting codes sorts ids; ``system_code`` indexes ``systems`` (sorted names); ``rank`` is 1-based.
    """

    query_code: np.ndarray
    doc_code: np.ndarray
    system_code: np.ndarray
    rank: np.ndarray
    queries: pa.Array
    docs: pa.Array
    systems: list[str]

    def to_frame(self, rows: np.ndarray | None = None) -> pd.DataFrame:
        """``query_id, doc_id, system, rank`` for the given row positions (all rows by default); the ids as
        categoricals over the ids used (a pool's sources repeat each pair once per system that has it)."""
        rows = np.arange(len(self.rank)) if rows is None else rows
        return pd.DataFrame({
            "query_id": _categorical(self.query_code[rows], self.queries),
            "doc_id": _categorical(self.doc_code[rows], self.docs),
            "system": pd.Categorical.from_codes(self.system_code[rows], categories=self.systems),
            "rank": self.rank[rows],
        })


def _categorical(codes: np.ndarray, vocabulary: pa.Array) -> pd.Categorical:
    used = np.flatnonzero(np.bincount(codes, minlength=len(vocabulary)))
    local = np.zeros(len(vocabulary), dtype=np.int32)
    local[used] = np.arange(len(used), dtype=np.int32)
    return pd.Categorical.from_codes(local[codes], categories=pd.Index(vocabulary.take(pa.array(used)).to_pandas()))


def _strings(index: pd.Index) -> pa.Array:
    return pa.array(index.astype(str), pa.large_string())


def _run_top_k(run: pd.DataFrame, k: int, ties: TieRule, keep: set[str] | None) -> tuple:
    """One run's top k as (query vocabulary, query codes, document ids, ranks), unused queries dropped; the
    document ids are coded once, for all runs together (:func:`_coded`)."""
    ordered = order_run(run, ties)
    rows = ordered.position < k
    if keep is not None:
        rows &= np.isin(ordered.query_code, np.flatnonzero(ordered.query_ids.astype(str).isin(keep)))
    used_queries, query_codes = np.unique(ordered.query_code[rows], return_inverse=True)
    docs = ordered.doc_id.take(pa.array(ordered.row[rows]))
    return (_strings(ordered.query_ids).take(pa.array(used_queries)), query_codes.astype(np.int32),
            pc.cast(docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs, pa.large_string()),
            (ordered.position[rows] + 1).astype(np.int32))


def _coded(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Each value's code in the vocabulary of its distinct values sorted in byte order; returns (codes, vocabulary).

    Arrow's hashing and sorting kernels do this in C++: coding millions of document ids in Python would dominate
    the pooling time.
    """
    encoded = pc.dictionary_encode(values)
    order = pc.sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)  # arrow's dictionary indices are 32-bit
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[encoded.indices.to_numpy(zero_copy_only=False)], encoded.dictionary.take(pa.array(order))


def _joined(arrays: list[pa.Array]) -> pa.Array:
    return pa.chunked_array(arrays, pa.large_string()).combine_chunks()


def stack_top_k(
    runs: Mapping[str, pd.DataFrame] | Iterable[tuple[str, pd.DataFrame]],
    depth: int,
    depths: Mapping[str, int] | None = None,
    ties: TieRule = "trec",
    query_ids: Iterable[str] | None = None,
) -> TopK:
    """Every system's top k per query, in the tie order of :func:`evalset.metrics.ranking.order_run`.

    ``runs`` maps system names to runs (from :func:`evalset.io.trec.read_run`); an iterable of pairs is
    consumed one run at a time, so a generator that reads each file lazily keeps only top-k codes in memory.
    ``depths`` overrides ``depth`` per system. With ``query_ids``, only those queries are kept.
    """
    depth, ties = check("depth", depth, POOL_SPEC_RULES["depth"]), check("ties", ties, POOL_SPEC_RULES["ties"])
    depths = {name: check(f"depth of {name}", k, POOL_SPEC_RULES["depth"]) for name, k in (depths or {}).items()}
    keep = None if query_ids is None else set(map(str, query_ids))
    parts: dict[str, tuple] = {}
    for name, run in runs.items() if isinstance(runs, Mapping) else runs:
        if name in parts:
            raise InputError(f"two runs are named {name!r}")
        parts[name] = _run_top_k(run, depths.get(name, depth), ties, keep) if len(run) else None
    unknown = sorted(set(depths) - set(parts))
    if unknown:
        raise InputError(f"per-system depth for unknown system(s) {', '.join(unknown)}")
    systems = sorted(name for name, part in parts.items() if part is not None)
    stacked = [parts.pop(name) for name in systems]
    code_of_entry, queries = _coded(_joined([p[0] for p in stacked]))  # each run's queries, then its rows' codes
    offsets = np.cumsum([0, *(len(p[0]) for p in stacked)])[:-1]
    query_code = np.concatenate([code_of_entry[offset + p[1]] for offset, p in zip(offsets, stacked, strict=True)]
                                or [np.zeros(0, np.int32)])
    lengths = [len(p[3]) for p in stacked]
    rank = np.concatenate([p[3] for p in stacked] or [np.zeros(0, np.int32)])
    docs = _joined([p[2] for p in stacked])
    del stacked  # each run's document ids, now held once (coded next)
    doc_code, docs = _coded(docs)
    return TopK(
        query_code=query_code,
        doc_code=doc_code,
        system_code=np.repeat(np.arange(len(systems), dtype=np.int16), lengths),
        rank=rank,
        queries=queries,
        docs=docs,
        systems=systems,
    )


def collect_top_k(
    runs: Mapping[str, pd.DataFrame] | Iterable[tuple[str, pd.DataFrame]],
    depth: int,
    depths: Mapping[str, int] | None = None,
    ties: TieRule = "trec",
    query_ids: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Every system's top k per query as one frame ``query_id, doc_id, system, rank`` (see :func:`stack_top_k`)."""
    return stack_top_k(runs, depth, depths, ties, query_ids).to_frame()
