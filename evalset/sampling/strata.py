"""Step 3: query ids, and traffic strata by cumulative share, in the one canonical order both engines share
(frequency descending, then ``query_id``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.sampling.options import QueryCounts, Strata
from evalset.speed.parallel import column_pieces, parallel_map
from evalset.speed.strings import string_bytes, string_column


def query_ids(queries: Sequence[str], sources: Sequence[str] | None = None) -> list[str]:
    """The stable ``query_id`` of each normalised query (see the module conventions)."""
    if sources is None:
        keys = queries
    else:
        keys = [s + "\t" + q if s else q for s, q in zip(sources, queries, strict=True)]
    return ["q" + hashlib.md5(key.encode("utf-8")).hexdigest()[:16] for key in keys]


def assign_strata(frequencies: pd.DataFrame, strata: Strata = Strata()) -> pd.DataFrame:
    """Add ``stratum`` to ``query_id, query, source, frequency`` by cumulative traffic share (boundary rule in
    the module docstring); rows come out ordered by source, stratum, query_id."""
    return counts_from_frequencies(frequencies, strata, {}, 0, "submissions").queries


def counts_from_frequencies(frequencies: pd.DataFrame, strata: Strata, dropped: dict[str, int], rows_read: int,
                            count_by: str) -> QueryCounts:
    """Stratify ``query_id, query, source, frequency`` (one row per query, any order) into :class:`QueryCounts`;
    ``dropped``, ``rows_read`` and ``count_by`` are passed on as they are."""
    frequencies = frequencies.reset_index(drop=True)
    sources = pd.factorize(frequencies["source"], sort=True)[0]
    ids = id_sort_keys(pa.Array.from_pandas(frequencies["query_id"]))
    frequency = frequencies["frequency"].to_numpy(dtype=np.int64)
    ordered = np.lexsort((ids, -frequency, sources))
    before = np.empty(len(ordered), dtype=np.float64)
    total = np.empty(len(ordered), dtype=np.float64)
    for source in np.unique(sources):
        rows = ordered[sources[ordered] == source]
        traffic = np.cumsum(frequency[rows])
        before[rows] = traffic - frequency[rows]
        total[rows] = traffic[-1]
    tier = np.zeros(len(frequencies), dtype=np.int64)
    for cut in strata.cuts:
        tier += before >= cut * total
    order = canonical_order(ids, tier, sources)
    texts = pa.table({"query_id": pa.array(frequencies["query_id"], pa.string()),
                      "query": pa.array(frequencies["query"], pa.string())})
    return QueryCounts(texts, order, sources[order], sorted(frequencies["source"].unique()), tier[order],
                       frequency[order], ids[order], dropped, rows_read, count_by, strata)


def canonical_order(id_keys: np.ndarray, tiers: np.ndarray, source_codes: np.ndarray) -> np.ndarray:
    """The canonical row order, by source, tier, query_id (``id_keys`` from :func:`id_sort_keys`): sorted by
    id, then (stably) by group."""
    groups = source_codes.astype(np.int64) * (int(tiers.max(initial=0)) + 1) + tiers
    order = _argsort_distinct(id_keys)
    small = np.uint16 if groups.max(initial=0) < 2**16 else np.int64  # 16-bit keys take a radix sort
    return order[np.argsort(groups[order].astype(small), kind="stable")]


def _argsort_distinct(keys: np.ndarray) -> np.ndarray:
    """``np.argsort`` of distinct keys (no stable sort needed), the lower and upper half of their range
    sorted side by side."""
    if len(keys) < 1 << 16:
        return np.argsort(keys)
    middle = (keys.min() >> np.uint64(1)) + (keys.max() >> np.uint64(1))
    upper = keys > middle
    halves = [np.flatnonzero(~upper), np.flatnonzero(upper)]
    return np.concatenate(parallel_map(lambda rows: rows[np.argsort(keys[rows])], halves))


_HEX_VALUE = np.full(256, 16, dtype=np.uint8)  # 16: not a lower-case hex digit
_HEX_VALUE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)


def id_sort_keys(query_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Keys that sort like the ``query_id`` strings: for ids of the form ``q`` + 16 hex digits, the number
    they write, read straight from the Arrow buffers (numbers sort far faster than strings); for any other
    ids, their rank."""
    column = string_column(query_ids)
    pieces = list(column_pieces(column))
    keys = parallel_map(_hex_id_numbers, pieces)
    if column.null_count == 0 and all(part is not None for part in keys):
        return np.concatenate([np.zeros(0, dtype=np.uint64), *keys])
    return pc.rank(column.combine_chunks(), sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.uint64)


def _hex_id_numbers(piece: pa.Array) -> np.ndarray | None:
    """The numbers that ids ``q`` + 16 hex digits write, or None if some id has another form."""
    _, lengths, data = string_bytes(piece)
    if not np.all(lengths == 17):
        return None
    text = data.reshape(-1, 17)
    digits = _HEX_VALUE[text[:, 1:]]
    if not (np.all(text[:, 0] == ord("q")) and np.all(digits < 16)):
        return None
    number = (digits[:, 0::2] << 4) | digits[:, 1::2]  # the 8 bytes, most significant first
    return np.ascontiguousarray(number).view(">u8").ravel().astype(np.uint64)
