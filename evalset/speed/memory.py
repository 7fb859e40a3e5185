"""Memory handed back: arrow's allocator keeps the memory freed by its arrays for reuse, and the C library keeps
freed blocks of numpy's smaller arrays, so that after reading a big file a process holds several hundred MiB it no
longer uses, and the next phase's peak stacks on it. Releasing it at the end of a phase keeps the peak that of the
live data (10M judgments read and prepared: 813 MiB resident before, 563 MiB after, 2026-12-02)."""

from __future__ import annotations

import ctypes

import pyarrow as pa


def _c_library_trim():
    """glibc's ``malloc_trim`` (None elsewhere: musl, macOS, Windows keep no such heap to trim)."""
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own symbols, the C library's among them
    except (OSError, AttributeError, TypeError):
        return None


_TRIM = _c_library_trim()


def release_unused() -> None:
    """Give the memory that arrow's allocator and the C library hold but no array uses back to the system (a few
    ms)."""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)
