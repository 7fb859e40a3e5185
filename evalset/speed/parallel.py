"""Work spread over the machine's cores with threads: numpy, arrow and DuckDB release the GIL in their loops,
so independent pieces of one column (or one table) run side by side.

Whole-column work runs piece by piece (:data:`PIECE_ROWS` rows): a piece's temporaries stay in cache and are
reused from one piece to the next, where whole-column temporaries would each be fresh memory, which is slow to
fault in on these machines."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pyarrow as pa

T = TypeVar("T")
_THREADS = "evalset-worker"


def parallel_map(func: Callable[[object], T], items: Iterable) -> list[T]:
    """``func`` of each item, on a thread per core; the results in order. Inside one of those threads (a
    nested call) the items run one after the other, so that no thread waits for a busy pool."""
    items = list(items)
    if len(items) < 2 or (os.cpu_count() or 1) < 2 or threading.current_thread().name.startswith(_THREADS):
        return [func(item) for item in items]
    return list(_pool(os.getpid()).map(func, items))


@functools.cache
def _pool(pid: int) -> ThreadPoolExecutor:  # one per process: a forked child cannot use its parent's threads
    return ThreadPoolExecutor(max_workers=os.cpu_count(), thread_name_prefix=_THREADS)


PIECE_ROWS = 1 << 17


def column_pieces(column: pa.ChunkedArray):
    """Zero-copy slices of at most ``PIECE_ROWS`` rows, in order."""
    for chunk in column.chunks:
        for start in range(0, len(chunk), PIECE_ROWS):
            yield chunk.slice(start, PIECE_ROWS)


def row_blocks(count: int):
    """``(start, stop)`` of consecutive blocks of at most ``PIECE_ROWS`` rows."""
    return ((start, min(start + PIECE_ROWS, count)) for start in range(0, count, PIECE_ROWS))


def in_blocks(work: Callable[[int, int], object], count: int) -> list:
    """``work(start, stop)`` for each of :func:`row_blocks`, on a thread per core; the results in order.

    numpy and arrow release the GIL in their loops, so blocks run side by side.
    """
    return parallel_map(lambda block: work(*block), list(row_blocks(count)))
