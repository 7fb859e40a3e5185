"""Work spread over the machine's cores with threads: numpy, arrow and DuckDB release the GIL in their loops,
so independent pieces of one column (or one table) run side by side."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

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
