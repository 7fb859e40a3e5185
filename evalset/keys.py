"""Exact, order-preserving integer keys for id strings, and joins on them, without hashing strings in Python.

Document ids are compared millions of times (tie rules, duplicates, the join with the qrels). Short ids
(up to 32 bytes, which covers MS MARCO, TREC and most web collections) are packed into 1-4 big-endian
uint64 words: equal ids give equal words, and comparing the words in order is comparing the ids in byte
order. Longer ids fall back to their rank in a shared sorted dictionary. Either way the keys are exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

MAX_WORDS = 4


def as_string_array(values) -> pa.Array:
    """An arrow string array (one chunk) from a Series, an array or a chunked array; zero-copy when possible."""
    if isinstance(values, pd.Series):
        values = values.array
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.large_string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if isinstance(array, pa.DictionaryArray):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = pc.cast(array, pa.large_string())
    return array


def _bounds(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, offsets_buffer, data_buffer = array.buffers()
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[array.offset: array.offset + len(array) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64), data


def _words_needed(array: pa.Array) -> int:
    if len(array) == 0:
        return 1
    longest = pc.max(pc.binary_length(array)).as_py() or 0
    return max(1, -(-longest // 8))


def _pack(array: pa.Array, words: int) -> np.ndarray:
    starts, lengths, data = _bounds(array)
    packed = np.zeros((len(array), words * 8), dtype=np.uint8)
    shortest = int(lengths.min()) if len(array) else 0
    for j in range(int(lengths.max()) if len(array) else 0):
        if j < shortest:
            packed[:, j] = data[starts + j]
        else:
            rows = np.flatnonzero(lengths > j)
            packed[rows, j] = data[starts[rows] + j]
    return packed.view(">u8").astype(np.uint64)


def string_keys(*arrays) -> list[np.ndarray]:
    """Keys of shape (n, w) uint64 for each array, in one shared key space (same id -> same key row).

    Row-wise lexicographic order of the keys is the byte order of the ids.
    """
    arrays = [as_string_array(a) for a in arrays]
    words = max(_words_needed(a) for a in arrays)
    if words <= MAX_WORDS:
        return [_pack(a, words) for a in arrays]
    combined = pa.chunked_array(arrays, type=arrays[0].type) if len({a.type for a in arrays}) == 1 else \
        pa.chunked_array([pc.cast(a, pa.large_string()) for a in arrays])
    encoded = pc.dictionary_encode(combined.combine_chunks())
    rank = np.empty(len(encoded.dictionary), dtype=np.uint64)
    rank[pc.sort_indices(encoded.dictionary).to_numpy()] = np.arange(len(encoded.dictionary), dtype=np.uint64)
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    cuts = np.cumsum([0, *(len(a) for a in arrays)])
    return [codes[cuts[i]: cuts[i + 1]].reshape(-1, 1) for i in range(len(arrays))]


def row_hash(query_code: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """A 64-bit mix of (query code, key words); equal rows hash equal, collisions are checked by callers."""
    mixed = query_code.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for index, word in enumerate(keys.T):
        step = (mixed ^ word) * np.uint64(0xBF58476D1CE4E5B9)
        step ^= step >> np.uint64(31)
        # zero words (the padding of short ids) leave the hash alone, so widening keys keeps their hashes
        mixed = step if index == 0 else np.where(word != 0, step, mixed)
    return mixed


@dataclass(frozen=True)
class HashedRows:
    """(query code, doc key) rows with their hashes and the order that sorts the hashes.

    Sorting once makes both duplicate detection (equal neighbours) and the join with the qrels (a search
    with sorted needles) cache-friendly; hash collisions are resolved by comparing the exact keys.
    """

    query: np.ndarray
    keys: np.ndarray
    hashes: np.ndarray
    order: np.ndarray

    @classmethod
    def of(cls, query: np.ndarray, keys: np.ndarray) -> HashedRows:
        hashes = row_hash(query, keys)
        return cls(query, keys, hashes, np.argsort(hashes))

    def subset(self, keep: np.ndarray) -> HashedRows:
        """The rows where ``keep`` is true, still sorted by hash."""
        new_index = np.cumsum(keep) - 1
        order = new_index[self.order[keep[self.order]]]
        return HashedRows(self.query[keep], self.keys[keep], self.hashes[keep], order)

    def repeated(self) -> np.ndarray:
        """True for every row equal to an earlier row (same query, same key)."""
        ordered = self.hashes[self.order]
        same = ordered[1:] == ordered[:-1]
        repeated = np.zeros(len(self.query), dtype=bool)
        if not same.any():
            return repeated
        rows = np.sort(self.order[np.r_[same, False] | np.r_[False, same]])  # in row order
        exact = pd.DataFrame(np.column_stack([self.query[rows].astype(np.uint64), self.keys[rows]])).duplicated()
        repeated[rows[exact.to_numpy()]] = True
        return repeated

    def lookup(self, table_query: np.ndarray, table_keys: np.ndarray) -> np.ndarray:
        """For each row, the index of the equal row in a table of unique rows, or -1."""
        found = np.full(len(self.query), -1, dtype=np.int64)
        if len(table_query) == 0 or len(self.query) == 0:
            return found
        table_hash = row_hash(table_query, table_keys)
        table_order = np.argsort(table_hash)
        sorted_hash = table_hash[table_order]
        if np.any(sorted_hash[1:] == sorted_hash[:-1]):  # a 64-bit collision: take the exact (slower) road
            return _lookup_exact(self.query, self.keys, table_query, table_keys)
        needles = self.hashes[self.order]
        slot = np.minimum(np.searchsorted(sorted_hash, needles), len(table_order) - 1)
        candidate = table_order[slot]
        rows = self.order
        keys, table_keys = _same_width(self.keys, table_keys)
        hit = (self.query[rows] == table_query[candidate]) & np.all(keys[rows] == table_keys[candidate], axis=1)
        found[rows[hit]] = candidate[hit]
        return found


def _same_width(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = max(a.shape[1], b.shape[1])
    return tuple(np.pad(k, ((0, 0), (0, width - k.shape[1]))) if k.shape[1] < width else k for k in (a, b))


def _lookup_exact(query, keys, table_query, table_keys) -> np.ndarray:
    keys, table_keys = _same_width(keys, table_keys)
    columns = ["q", *(f"k{i}" for i in range(keys.shape[1]))]
    left = pd.DataFrame(np.column_stack([query.astype(np.uint64), keys]), columns=columns)
    right = pd.DataFrame(np.column_stack([table_query.astype(np.uint64), table_keys]), columns=columns)
    right["index"] = np.arange(len(right))
    merged = left.merge(right, on=columns, how="left")
    return merged["index"].fillna(-1).to_numpy(dtype=np.int64)


def join_keys(hashed: HashedRows, array, rows: np.ndarray, other) -> tuple[HashedRows, np.ndarray]:
    """Keys of ``other`` in the key space of ``hashed`` (the keys of ``array`` at ``rows``).

    Packed keys of different widths are compatible (zero padding); otherwise both sides are re-encoded in
    one dictionary and the rows re-hashed.
    """
    array, other = as_string_array(array), as_string_array(other)
    words = max(_words_needed(array), _words_needed(other))
    if words <= MAX_WORDS:
        return hashed, _pack(other, words)
    taken, other_keys = string_keys(array.take(pa.array(rows)), other)
    return HashedRows.of(hashed.query, taken), other_keys
