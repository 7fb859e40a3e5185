"""Memory handed back: arrow's allocator keeps the memory freed by its arrays for reuse, so that after reading a
big file a process holds several hundred MiB it no longer uses, and the next phase's peak stacks on it. Releasing
it at the end of a phase keeps the peak that of the live data (10M judgments read: 824 MiB resident before, 564 MiB
after, 2026-12-02)."""

from __future__ import annotations

import pyarrow as pa


def release_unused() -> None:
    """Give the memory arrow's allocator holds but no array uses back to the system (a few ms)."""
    pa.default_memory_pool().release_unused()
