"""The warm server's resident memory: measuring it, and giving freed heap back to the system."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache


def resident_mb() -> float:
    """Return this process's resident memory in MB (0 where /proc is unavailable)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def release_free_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``; elsewhere nothing).

    Opening a large project's indexes parses tens of MB of JSON and rows that are freed once
    decoded, but glibc keeps the freed pages: on Django 5.0 that is 60-70 MB the server
    would hold for as long as it runs. Trimming takes milliseconds, so the server does it
    between commands.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:  # the symbols this process already has: no library search (``find_library`` forks)
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): no such call
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]
