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
    texts = pa.table({"query_id": pa.array(frequencies["query_id"], pa.string()),
                      "query": pa.array(frequencies["query"], pa.string())})
    return stratified_counts(texts, sources, sorted(frequencies["source"].unique()),
                             frequencies["frequency"].to_numpy(dtype=np.int64), id_sort_keys(texts["query_id"]),
                             strata, dropped, rows_read, count_by)


def stratified_counts(texts: pa.Table, source_code: np.ndarray, source_names: list[str], frequency: np.ndarray,
                      id_keys: np.ndarray, strata: Strata, dropped: dict[str, int], rows_read: int,
                      count_by: str) -> QueryCounts:
    """:class:`QueryCounts` of one row per query (``texts``: ``query_id, query``; ``source_code`` into
    ``source_names``, ``frequency`` and ``id_keys`` (:func:`id_sort_keys`) aligned with it): step 3 of every
    engine."""
    tier = traffic_tiers(frequency, id_keys, source_code, strata)
    order = canonical_order(id_keys, tier, source_code)
    return QueryCounts(texts, order, source_code[order], source_names, tier[order], frequency[order], id_keys[order],
                       dropped, rows_read, count_by, strata)


def traffic_tiers(frequency: np.ndarray, id_keys: np.ndarray, source_code: np.ndarray,
                  strata: Strata) -> np.ndarray:
    """Each query's traffic stratum (0 is the first) by the boundary rule: within a source, queries in
    frequency descending then ``query_id`` order, each in the first stratum whose cut point times the source's
    traffic is above the traffic before it.

    Counted per frequency level: the traffic before a query is its level's plus ``frequency x`` its place among
    the level's queries by id, and places are only numbered in the few levels that straddle a cut point (no sort
    of every query by frequency and id).
    """
    tier = np.zeros(len(frequency), dtype=np.int64)
    for source in np.unique(source_code):
        rows = np.flatnonzero(source_code == source)
        counts = frequency[rows]
        levels, queries, level_of_row = _frequency_levels(counts)
        traffic = levels * queries
        level_before = np.cumsum(traffic) - traffic
        total = float(traffic.sum())
        first = _tier_of(level_before, strata, total)
        last = _tier_of(level_before + levels * (queries - 1), strata, total)
        tier[rows] = first[level_of_row]
        for level in np.flatnonzero(first != last):
            members = rows[level_of_row == level]
            members = members[np.argsort(id_keys[members])]
            tier[members] = _tier_of(level_before[level] + levels[level] * np.arange(len(members)), strata, total)
    return tier


def _frequency_levels(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct frequencies, the most frequent first, how many queries have each, and each query's level:
    counted with ``bincount`` when the frequencies are small numbers (most logs), else by a sort."""
    if len(counts) and counts.min() >= 0 and counts.max() <= 4 * len(counts):
        queries = np.bincount(counts)
        levels = np.flatnonzero(queries)[::-1]
        level_index = np.zeros(len(queries), dtype=np.int64)
        level_index[levels] = np.arange(len(levels))
        return levels, queries[levels], level_index[counts]
    levels, level_of_row, queries = np.unique(counts, return_inverse=True, return_counts=True)
    return levels[::-1], queries[::-1], len(levels) - 1 - level_of_row


def _tier_of(before: np.ndarray, strata: Strata, total: float) -> np.ndarray:
    """The stratum of queries with ``before`` traffic ahead of them in a source of ``total``."""
    found = np.zeros(len(before), dtype=np.int64)
    for cut in strata.cuts:
        found += before >= cut * total
    return found


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
