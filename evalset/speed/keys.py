"""Exact, order-preserving integer keys for id strings, and joins on them, without hashing strings in Python.

Document ids are compared millions of times (tie rules, duplicates, the join with the qrels). Short ids
(up to 32 bytes, which covers MS MARCO, TREC and most web collections) are packed into 1-4 big-endian
uint64 words: equal ids give equal words, and comparing the words in order is comparing the ids in byte
order. Longer ids fall back to their rank in a shared sorted dictionary. Either way the keys are exact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalset.speed.parallel import column_pieces, in_blocks, parallel_map
from evalset.speed.strings import as_string_array, length_range, string_bytes, string_column

MAX_WORDS = 4


def _words_needed(column: pa.ChunkedArray) -> int:
    return max(1, -(-length_range(column)[1] // 8))


# _MASKS[r] keeps the first r bytes of a big-endian word
_MASKS = np.array([0] + [((1 << (8 * r)) - 1) << (64 - 8 * r) for r in range(1, 9)], dtype=np.uint64)


def _pack(column: pa.ChunkedArray, words: int) -> np.ndarray:
    packed = np.empty((words, len(column)), dtype=np.uint64)
    pieces = list(column_pieces(column))
    starts = np.cumsum([0, *map(len, pieces)])
    parallel_map(lambda i: _pack_piece(pieces[i], packed[:, starts[i]: starts[i + 1]]), range(len(pieces)))
    return packed.T


def _pack_piece(piece: pa.Array, out: np.ndarray) -> None:
    starts, lengths, data = string_bytes(piece)
    # The piece's bytes, zero-padded, viewed as overlapping uint64s, one starting at every byte: word j of an
    # id is one gather at (start + 8j), byte-swapped to big-endian order, with the bytes past its end masked off.
    padded = np.zeros(len(data) + 8 * len(out), dtype=np.uint8)
    padded[: len(data)] = data
    windows = np.ndarray(shape=(len(padded) - 7,), dtype=np.uint64, buffer=padded, strides=(1,))
    for j, word in enumerate(out):
        word[:] = windows[starts + 8 * j if j else starts]  # faster than np.take(out=) on unaligned windows
        if np.little_endian:
            word.byteswap(inplace=True)
        remaining = lengths - 8 * j
        np.clip(remaining, 0, 8, out=remaining)
        word &= _MASKS[remaining]


def string_keys(*arrays) -> list[np.ndarray]:
    """Keys of shape (n, w) uint64 for each array, in one shared key space (same id -> same key row).

    Row-wise lexicographic order of the keys is the byte order of the ids.
    """
    columns = [string_column(a) for a in arrays]
    words = max(_words_needed(c) for c in columns)
    if words <= MAX_WORDS:
        return [_pack(c, words) for c in columns]
    combined = pa.chunked_array([chunk.cast(pa.large_string()) for c in columns for chunk in c.chunks],
                                type=pa.large_string())
    encoded = pc.dictionary_encode(combined.combine_chunks())
    rank = np.empty(len(encoded.dictionary), dtype=np.uint64)
    rank[pc.sort_indices(encoded.dictionary).to_numpy()] = np.arange(len(encoded.dictionary), dtype=np.uint64)
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    cuts = np.cumsum([0, *(len(c) for c in columns)])
    return [codes[cuts[i]: cuts[i + 1]].reshape(-1, 1) for i in range(len(columns))]


_SEED, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


def row_hash(query_code: np.ndarray, keys: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit mix of (query code, key words); equal rows hash equal, collisions are checked by callers."""
    mixed = np.empty(len(query_code), dtype=np.uint64) if out is None else out

    def hash_block(start: int, stop: int) -> None:
        block = mixed[start:stop]
        np.copyto(block, query_code[start:stop], casting="unsafe")
        block *= _SEED
        for index, word in enumerate(keys[start:stop].T):
            step = block ^ word
            step *= _MIX
            step ^= step >> np.uint64(31)
            # zero words (the padding of short ids) leave the hash alone, so widening keys keeps their hashes
            if index == 0:
                block[:] = step
            else:
                np.copyto(block, step, where=word != 0)

    in_blocks(hash_block, len(query_code))
    return mixed


def repeated_rows(query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """True for every row equal to an earlier row (same query, same key); see :func:`join`."""
    empty = np.zeros(0, dtype=np.int64)
    return join(query, keys, empty, np.zeros((0, keys.shape[1]), dtype=np.uint64))[1]


PAIR_BLOCK_ROWS = 1 << 20
"""Rows whose (query, id) pairs :func:`repeated_pairs` checks at a time when each query's rows are together."""


def repeated_pairs(query_code: np.ndarray, ids) -> np.ndarray:
    """True for every row whose (query, id) pair an earlier row holds (:func:`repeated_rows` of the ids' keys);
    ``query_code``: each row's query, 0 to n - 1 (:func:`query_codes`). When each query's rows are together (as
    in qrels files), in blocks of whole queries, so that the keys of a big table are never all held at once."""
    ids = string_column(ids)
    count = len(query_code)
    change = np.flatnonzero(query_code[1:] != query_code[:-1]) + 1
    bounds = np.array([0, count])
    if len(change) and len(change) == int(query_code.max()):  # each query's rows together
        wanted = np.arange(PAIR_BLOCK_ROWS, count, PAIR_BLOCK_ROWS)
        bounds = np.unique(np.r_[0, change[np.minimum(np.searchsorted(change, wanted), len(change) - 1)], count])
    repeated = np.zeros(count, dtype=bool)
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        (keys,) = string_keys(ids.slice(start, stop - start))
        repeated[start:stop] = repeated_rows(query_code[start:stop], keys)
    return repeated


def join(query: np.ndarray, keys: np.ndarray, table_query: np.ndarray,
         table_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Match (query, key) rows to a table of unique rows, and find the rows that repeat an earlier row.

    Returns ``found`` (for each row, the index of the equal table row, or -1) and ``repeated`` (True for a row
    equal to an earlier one).

    A sort-merge join: each entry's 64-bit hash, truncated to make room for its row number in the low bits, is
    sorted together with the table's, so that equal entries sit side by side with the earlier row first; every
    pairing is confirmed on the exact keys, and blocks of more than two colliding entries (repeats, or
    truncated-hash collisions) are resolved by exact comparison.
    """
    found = np.full(len(query), -1, dtype=np.int32 if len(table_query) < 2**31 else np.int64)
    repeated = np.zeros(len(query), dtype=bool)
    if len(query) == 0:
        return found, repeated
    keys, table_keys = _same_width(keys, table_keys)
    rows_count, total = len(query), len(query) + len(table_query)
    bits = max(1, int(total - 1).bit_length())
    low = np.uint64((1 << bits) - 1)

    merged = np.empty(total, dtype=np.uint64)
    row_hash(query, keys, out=merged[:rows_count])
    row_hash(table_query, table_keys, out=merged[rows_count:])

    def number_block(start: int, stop: int) -> None:
        block = merged[start:stop]
        block &= ~low
        block |= np.arange(start, stop, dtype=np.uint64)  # each entry's row number in the low bits

    in_blocks(number_block, total)
    merged.sort()
    equal = _adjacent_equal(merged, low)  # entries i and i + 1 share a truncated hash, in order
    after_equal, before_equal = np.zeros(len(equal), dtype=bool), np.zeros(len(equal), dtype=bool)
    after_equal[:-1] = np.diff(equal) == 1  # so do i + 1 and i + 2
    before_equal[1:] = after_equal[:-1]
    pairs = equal[~before_equal & ~after_equal]  # blocks of exactly two
    first = (merged[pairs] & low).astype(np.int64)
    second = (merged[pairs + 1] & low).astype(np.int64)
    first, second = first[first < rows_count], second[first < rows_count]  # two table rows never match
    twice = second < rows_count  # two rows of the run: a repeat when exactly equal
    a, b = first[twice], second[twice]
    exact = (query[a] == query[b]) & np.all(keys[a] == keys[b], axis=1)
    repeated[b[exact]] = True
    row, other = first[~twice], second[~twice] - rows_count
    exact = (query[row] == table_query[other]) & np.all(keys[row] == table_keys[other], axis=1)
    found[row[exact]] = other[exact]
    crowded = equal[before_equal | after_equal]
    if len(crowded):
        members = np.sort((merged[np.unique(np.r_[crowded, crowded + 1])] & low).astype(np.int64))
        rows, others = members[members < rows_count], members[members >= rows_count] - rows_count
        exact_repeat = pd.DataFrame(np.column_stack([query[rows].astype(np.uint64), keys[rows]])).duplicated()
        repeated[rows[exact_repeat.to_numpy()]] = True
        if len(others):
            hit = _lookup_exact(query[rows], keys[rows], table_query[others], table_keys[others])
            found[rows] = np.where(hit >= 0, others[np.maximum(hit, 0)], -1)
    return found, repeated


def _adjacent_equal(merged: np.ndarray, low: np.uint64) -> np.ndarray:
    """Indices i of sorted ``merged`` where entries i and i + 1 agree above the ``low`` bits."""

    def equal_in_block(start: int, stop: int) -> np.ndarray:
        differ = merged[start + 1: stop + 1] ^ merged[start:stop]
        return np.flatnonzero(differ <= low) + start

    return np.concatenate([np.zeros(0, dtype=np.int64), *in_blocks(equal_in_block, len(merged) - 1)])


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


def join_keys(array, keys: np.ndarray, rows: Callable[[], np.ndarray], other) -> tuple[np.ndarray, np.ndarray]:
    """Keys of ``other`` in the key space of ``keys`` (the keys of ``array`` taken at ``rows()``, which is
    called only when needed).

    Packed keys of different widths are compatible (zero padding, see :func:`join`); otherwise both sides are
    re-encoded in one dictionary.
    """
    array, other = string_column(array), string_column(other)
    words = max(_words_needed(array), _words_needed(other))
    if words <= MAX_WORDS:
        return keys, _pack(other, words)
    taken, other_keys = string_keys(array.take(pa.array(rows())), other)
    return taken, other_keys


def _changes(piece: pa.Array) -> np.ndarray:
    """The rows of a string array that differ from the row before."""
    differ = pc.not_equal(piece.slice(1), piece.slice(0, len(piece) - 1)).to_numpy(zero_copy_only=False)
    return np.flatnonzero(differ) + 1


def query_codes(query_id) -> tuple[pd.Index, np.ndarray]:
    """The distinct query ids in byte order, and each row's index into them."""
    column = string_column(query_id)
    pieces = list(column_pieces(column))
    starts, heads, done = [np.zeros(0, dtype=np.int64)], [], 0
    for index, changes in enumerate(parallel_map(_changes, pieces)):  # where the id differs from the row before
        piece = pieces[index]
        if index == 0 or piece[0] != pieces[index - 1][len(pieces[index - 1]) - 1]:
            changes = np.r_[0, changes]
        starts.append(changes + done)
        heads += piece.take(pa.array(changes)).to_pylist()
        done += len(piece)
    starts = np.concatenate(starts)
    grouped = len(set(heads)) == len(heads)  # each query's rows are contiguous (most runs): no hashing of every row
    if grouped:
        names = np.array(heads, dtype=object)
    else:
        encoded = pc.dictionary_encode(as_string_array(column))
        names = np.array(encoded.dictionary.to_pylist(), dtype=object)
    order = np.argsort(np.array([name.encode() for name in names], dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order))
    if grouped:
        return pd.Index(names[order], dtype=object), np.repeat(rank, np.diff(np.r_[starts, len(column)]))
    return pd.Index(names[order], dtype=object), rank[encoded.indices.to_numpy(zero_copy_only=False)]
