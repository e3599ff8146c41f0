"""The warm server gives the heap's freed pages back to the system between commands."""

from __future__ import annotations

import platform

import pytest

from engram.cli._serve_memory import release_free_memory, resident_mb

GLIBC = platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's; elsewhere nothing is released")
def test_freed_heap_pages_go_back_to_the_system():
    # 1 KB blocks come from malloc's heap (not Python's small-object arenas); keeping every
    # tenth alive leaves holes that free() itself never returns.
    blocks = [bytes(1024 + i % 7) for i in range(150_000)]
    kept = blocks[::10]
    del blocks
    before = resident_mb()
    release_free_memory()
    after = resident_mb()
    assert kept and before - after > 50, (before, after)


def test_resident_memory_is_measured():
    assert resident_mb() > 1
