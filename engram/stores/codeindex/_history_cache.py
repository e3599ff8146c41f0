"""Keep a history's ranking tables beside it, so a new process reads them instead of building them.

Building the tables from ``history.json`` (parse 20,000 commits, tokenise their messages,
follow renames) takes about half a second on a long history; reading them back as stored takes
a fifth of that. The tables file names the exact ``history.json`` it was built from (size,
modification time, inode and HEAD) and the build's version, so a history mined again, an
older engram's tables or a damaged file are never used: the tables are built again and the
file replaced. Writing it is best effort (a read-only or vanished index folder only costs the
next process the build).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engram.stores.codeindex._history_evidence import HistoryTables

log = logging.getLogger(__name__)

TABLES_FILE = "history-tables.json"
"""The stored tables' file name inside the index folder."""
TABLES_VERSION = 1
"""Raised whenever ``HistoryTables.build`` changes what it computes (a stored file of another
version is built again)."""

Stamp = tuple[int, int, int]
"""``history.json``'s size, modification time (ns) and inode: which file the tables came from."""


def history_stamp(path: Path) -> Stamp | None:
    """Return ``path``'s stamp, None when it cannot be read."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino)


def load_tables(folder: Path, stamp: Stamp) -> tuple[HistoryTables, str] | None:
    """Return the stored tables and the history's note when they were built from ``stamp``."""
    try:
        data = json.loads((folder / TABLES_FILE).read_bytes())
        if data.get("version") != TABLES_VERSION or data.get("stamp") != list(stamp):
            return None
        tables = HistoryTables(**{name: data[name] for name in _FIELDS})
        if not _well_formed(tables):
            return None
        return tables, str(data["note"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def save_tables(folder: Path, stamp: Stamp, tables: HistoryTables, note: str) -> None:
    """Store ``tables`` for the history file of ``stamp`` (never raises).

    Skipped when the history file changed meanwhile, or the index folder is gone (it is not
    created again for a cache).
    """
    from engram.stores.files import write_atomically
    from engram.stores.history import HISTORY_FILE

    if history_stamp(folder / HISTORY_FILE) != stamp:
        return
    data: dict[str, Any] = {"version": TABLES_VERSION, "stamp": list(stamp), "note": note}
    data.update((name, getattr(tables, name)) for name in _FIELDS)
    try:
        write_atomically(folder / TABLES_FILE, json.dumps(data, separators=(",", ":")).encode())
    except (OSError, ValueError) as err:
        log.debug("engram: history tables not stored in %s: %s", folder, err)


_FIELDS = (
    "files",
    "weights",
    "subjects",
    "times",
    "touches",
    "postings",
    "lengths",
    "recency",
    "functions",
)


def _well_formed(tables: HistoryTables) -> bool:
    """Check the shapes the features rely on (a damaged file is built again, never trusted)."""
    per_commit = (tables.files, tables.weights, tables.subjects, tables.times, tables.lengths)
    n = len(tables.weights)
    if not all(isinstance(v, list) and len(v) == n for v in (*per_commit, tables.functions)):
        return False
    if not all(isinstance(m, dict) for m in (tables.touches, tables.postings, tables.recency)):
        return False
    return _indexes_within(tables.touches.values(), n, 1) and _indexes_within(
        tables.postings.values(), n, 2
    )


def _indexes_within(lists: Iterable[Any], n: int, step: int) -> bool:
    """Tell whether every list holds ints whose every ``step``-th one is a commit below ``n``."""
    for values in lists:
        if not isinstance(values, list) or len(values) % step:
            return False
        commits = values[::step]
        if commits and not (0 <= min(commits) and max(commits) < n):
            return False
    return True
