"""SQLite files that several processes share: connect, lock, and one message per failure.

No LangGraph here: the code index's manifest and the embedding cache open their files with
these without loading the memory store's machinery (``backends``).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.stores._errors import DatabaseUnreadableError, DiskFullError, StoreReadOnlyError
from engram.stores._write_lock import LockFactory, file_lock

MEMORY_DB = "memory.sqlite"
CHECKPOINT_DB = "checkpoints.sqlite"
SQLITE_BUSY_TIMEOUT_S = 30.0
PRIVATE_FILE_MODE = 0o600
SQLITE_PRIMARY_CODE = 0xFF
"""Mask of an extended SQLite result code's primary code (``SQLITE_READONLY_DBMOVED`` → 8)."""


def sqlite_lock(path: Path) -> LockFactory:
    """Return the cross-process lock of a SQLite file (a lock file beside it)."""
    return file_lock(path.with_name(path.name + ".lock"))


DATABASE_HINTS = {
    MEMORY_DB: "restore it: move the damaged file aside, then `engram memory import BACKUP`; "
    "`engram doctor` checks every store",
    CHECKPOINT_DB: "move the damaged file aside to start without saved sessions; "
    "`engram doctor` checks every store",
}


IO_ERROR_HINT = (
    "check the disk (free space, `dmesg`) and run the command again; "
    "`engram doctor` checks every store"
)
NEARLY_FULL_BYTES = 1 << 20
"""Free space under which an I/O error opening a database is taken for a full disk (SQLite
reports a ``-shm`` file it cannot grow as an I/O error, not as ``SQLITE_FULL``)."""


def _nearly_full(path: Path) -> bool:
    """Return True when the file system holding ``path`` has (almost) no room left."""
    try:
        return shutil.disk_usage(path.parent).free < NEARLY_FULL_BYTES
    except OSError:
        return False


@contextmanager
def database_errors(path: Path) -> Iterator[None]:
    """Turn SQLite's errors about ``path`` into ``DatabaseUnreadableError`` naming the file."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        code = getattr(exc, "sqlite_errorcode", 0) & SQLITE_PRIMARY_CODE
        if code == sqlite3.SQLITE_READONLY:
            raise StoreReadOnlyError(
                f"cannot write {path}: it can only be read here, so nothing was saved"
            ) from exc
        if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(path)):
            raise DiskFullError(f"the disk is full: cannot write {path}") from exc
        if code == sqlite3.SQLITE_IOERR:  # the disk failed, not necessarily the file
            raise DatabaseUnreadableError(
                f"cannot read or write {path}: {exc}", hint=IO_ERROR_HINT
            ) from exc
        raise DatabaseUnreadableError(
            f"cannot use the database {path}: {exc}",
            hint=DATABASE_HINTS.get(path.name, DatabaseUnreadableError.hint),
        ) from exc


def sqlite_connect(path: Path) -> sqlite3.Connection:
    """Open a SQLite file for several processes at once (WAL, busy timeout, autocommit).

    Switching a new database to WAL fails with "database is locked" when another process
    does the same at that instant, so it happens under the file's lock.

    Raises:
        DatabaseUnreadableError: The file is not a readable SQLite database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite_lock(path)("open"), database_errors(path):
        if not path.exists():  # created owner-only, like the ledger: it holds memory and code
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE))
        conn = sqlite3.connect(
            str(path),
            check_same_thread=False,
            isolation_level=None,
            timeout=SQLITE_BUSY_TIMEOUT_S,
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            conn.close()
            raise
    return conn
