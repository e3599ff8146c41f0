"""Open a SQLite database for reading only, when its folder cannot be written (a read-only home).

A database in WAL mode cannot be opened with ``mode=ro`` unless its ``-shm`` file exists or can
be made; on a read-only file system nobody can change it either, so it is then opened as
``immutable``. A missing database opens as an empty one in memory, so a read-only home with no
memory yet lists nothing instead of failing.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)


def can_write(path: Path) -> bool:
    """Return True when the SQLite file ``path`` (and its journal beside it) can be written."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # created on first use: what matters is whether it can be
    if not folder.is_dir():
        return True  # a file in the way: opening says so in the usual words
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open ``path`` for reading; writes through the connection fail ("readonly database").

    Returns an empty in-memory database, writable until the caller has made its tables and set
    ``query_only``, when ``path`` does not exist.

    Raises:
        sqlite3.DatabaseError: The file is not a readable SQLite database.
    """
    if not path.exists():
        return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    uri = path.resolve().as_uri()
    try:
        conn = _probed(f"{uri}?mode=ro")
    except sqlite3.OperationalError as exc:
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size:
            log.warning(
                "%s: its write-ahead log cannot be read here; recent writes may be missing (%s)",
                path,
                exc,
            )
        conn = _probed(f"{uri}?immutable=1")
    conn.execute("PRAGMA query_only=ON")
    return conn


def _probed(uri: str) -> sqlite3.Connection:
    """Connect to ``uri`` and read its schema once, so a file that cannot be read fails here."""
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn
