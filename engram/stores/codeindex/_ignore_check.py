"""Whether a tree holds an ignore file ripgrep cannot safely open, listed again only on change.

ripgrep opens every ``.gitignore``, ``.ignore`` and ``.rgignore`` it meets with a blocking
open, so one that is a FIFO (or a link to a device) would hang it, and it follows a symbolic
link: a repository's ``.gitignore`` linked to a file outside would have ripgrep read that file
as rules (git itself no longer follows such links); ``unsafe_ignore_file`` lists
the tree's folders to find such a file before ripgrep runs. On a large tree that listing is a
noticeable part of a search (2,465 folders in Django: about 25 ms), and a long-running process
searches the same tree again and again. A new file, folder or link changes its folder's
modification time, so ``IgnoreFileCheck`` keeps the folders of a tree found clean with their
times and, next time, only reads those times (about a third of the cost); any difference, or a
folder changed within ``SETTLED_NS`` of the listing, means listing again.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from engram.stores.files import SETTLED_NS, is_skipped_dir

RG_IGNORE_FILES = frozenset({".gitignore", ".ignore", ".rgignore"})
"""Per-folder ignore files ripgrep opens as it walks."""


def unsafe_ignore_file(root: Path) -> bool:
    """Return True when an ignore file ripgrep would open is a link or not a regular file."""
    return _list(root, stamps=None)


def _list(root: Path, stamps: dict[str, int] | None) -> bool:
    """List ``root``'s folders (not the skipped ones); record their times into ``stamps``.

    Returns True when an ignore file is a symbolic link or not a regular file. When ``stamps``
    is given, a folder that cannot be read clears it and stops the recording (the result
    cannot be kept).
    """
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            if stamps is not None:
                stamps[folder] = os.stat(folder).st_mtime_ns
            with os.scandir(folder) as scan:
                for entry in scan:
                    if entry.is_dir(follow_symlinks=False):
                        if not is_skipped_dir(entry.name):
                            stack.append(entry.path)
                    elif entry.name in RG_IGNORE_FILES:
                        if entry.is_symlink() or not entry.is_file():
                            return True
        except OSError:
            if stamps is not None:
                stamps.clear()
                stamps = None
            continue
    return False


class IgnoreFileCheck:
    """``unsafe_ignore_file`` that remembers clean trees by their folders' modification times."""

    def __init__(self) -> None:
        self._clean: dict[Path, dict[str, int]] = {}
        self._lock = threading.Lock()

    def unsafe(self, root: Path) -> bool:
        """Return True when an ignore file under ``root`` is a link or not a regular file."""
        with self._lock:
            known = self._clean.get(root)
        if known is not None and _unchanged(known):
            return False
        stamps: dict[str, int] = {}
        started = time.time_ns()
        found = _list(root, stamps)
        settled = stamps and max(stamps.values()) <= started - SETTLED_NS
        with self._lock:
            if not found and settled:
                self._clean[root] = stamps
            else:
                self._clean.pop(root, None)
        return found


def _unchanged(stamps: dict[str, int]) -> bool:
    for folder, mtime_ns in stamps.items():
        try:
            if os.stat(folder).st_mtime_ns != mtime_ns:
                return False
        except OSError:
            return False
    return True
