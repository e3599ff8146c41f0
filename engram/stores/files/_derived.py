"""Values computed from a file's content, reused while the file is unchanged on disk.

A long-running process (the MCP server, a chat session) reads the same files turn after turn:
parsing one into chunks costs milliseconds each time. ``FileDerived`` keeps the value with the
file's identity and change stamp (device, inode, size, modification and change times) and
hands it back only while ``os.stat`` reports the same stamp. A file written in the same clock
tick as it was read could keep its stamp, so a file modified (or its metadata changed) less
than ``SETTLED_NS`` before it was read is never kept: any later write then lands on a later time.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_FILES = 512
"""Files whose values are kept; the least recently used goes first."""
SETTLED_NS = 2_000_000_000
"""A file modified this recently (nanoseconds) is not kept: its stamp may not change yet."""

Stamp = tuple[int, int, int, int, int]


def file_stamp(info: os.stat_result) -> Stamp:
    """Return what changes whenever a file's content may have changed."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class FileDerived(Generic[T]):
    """A bounded, thread-safe map from (key, file stamp) to a value computed from the file."""

    def __init__(self, max_files: int = MAX_FILES) -> None:
        self.max_files = max_files
        self._items: OrderedDict[Hashable, tuple[Stamp, T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, file: Path, make: Callable[[], T]) -> T:
        """Return the value for ``key``, made again by ``make`` when ``file`` changed.

        ``make`` reads ``file`` itself; the stamp is taken first, so a write during ``make``
        changes the stamp and the next call makes the value again.

        Raises:
            OSError: ``file`` cannot be examined (and whatever ``make`` raises).
        """
        info = os.stat(file)
        stamp = file_stamp(info)
        with self._lock:
            kept = self._items.get(key)
            if kept is not None and kept[0] == stamp:
                self._items.move_to_end(key)
                return kept[1]
        value = make()
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) >= SETTLED_NS:
            with self._lock:
                self._items[key] = (stamp, value)
                self._items.move_to_end(key)
                while len(self._items) > self.max_files:
                    self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        """Return how many files' values are kept."""
        return len(self._items)
