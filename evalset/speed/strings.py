"""String columns as arrow arrays, and views of the bytes they hold (no copies), for byte-level scans.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def string_column(values) -> pa.ChunkedArray:
    """An arrow string column from a Series, an array or a chunked array, without copying when possible
    (the chunks of a column read from a file are kept as they are)."""
    if isinstance(values, pd.Series):
        values = values.array
    column = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.large_string())
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = pc.cast(column, pa.large_string())
    return column


def as_string_array(values) -> pa.Array:
    """:func:`string_column` as one array (chunks are combined)."""
    column = string_column(values)
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def take_rows(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """``column.take(rows)`` (``rows``: integer positions), each chunk taken from on its own: arrow's take of a
    chunked string column first joins the chunks into one, a copy of the whole column at every call (10M qrels
    document ids: 150 MiB and 27 ms, for each block of a streamed run)."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return pa.chunked_array([], type=column.type)
    if column.num_chunks == 1:
        return column.take(pa.array(rows))
    bounds = np.cumsum([0, *(len(chunk) for chunk in column.chunks)])
    chunk_of = np.searchsorted(bounds, rows, side="right") - 1
    order = None if np.all(chunk_of[1:] >= chunk_of[:-1]) else np.argsort(chunk_of, kind="stable")
    ordered, chunks = (rows, chunk_of) if order is None else (rows[order], chunk_of[order])
    cuts = np.searchsorted(chunks, np.arange(column.num_chunks + 1))
    taken = pa.chunked_array([column.chunk(i).take(pa.array(ordered[cuts[i]:cuts[i + 1]] - bounds[i]))
                              for i in range(column.num_chunks) if cuts[i + 1] > cuts[i]], type=column.type)
    if order is None:
        return taken
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))
    return taken.take(pa.array(back))  # joins only the pieces taken


def string_bytes(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each string's start and byte length in ``data``, and ``data``: the bytes the strings hold (views of the
    array's buffers, no copies)."""
    _, offsets_buffer, data_buffer = array.buffers()
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[array.offset: array.offset + len(array) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    first, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    return offsets[:-1] - first, np.diff(offsets), data[first:end]


def length_range(values) -> tuple[int, int]:
    """The shortest and longest byte length of the strings (0, 0 when there are none)."""
    ranges = [pc.min_max(pc.binary_length(chunk)).as_py() for chunk in string_column(values).chunks if len(chunk)]
    return min((r["min"] for r in ranges), default=0), max((r["max"] for r in ranges), default=0)
