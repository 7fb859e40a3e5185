"""Memory handed back to the system between phases."""

import platform

import pytest

from evalset.speed import memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the C library's trim is glibc's")
def test_the_c_library_s_free_blocks_are_trimmed_too():
    assert memory._TRIM is not None
    memory.release_unused()
