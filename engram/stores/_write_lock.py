"""Cross-process write locks for the memory store's read-check-write sequences.

A conflict check reads the facts of a scope and then writes; two processes doing that at the
same instant could both pass the check. ``write_lock`` serializes those sequences: within a
process by a lock per store, across processes by what the backend registered when it was
opened (a lock file next to the SQLite database, a Postgres advisory lock).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

LockFactory = Callable[[str], AbstractContextManager[Any]]

_shared: weakref.WeakKeyDictionary[BaseStore, LockFactory] = weakref.WeakKeyDictionary()
_local: weakref.WeakKeyDictionary[BaseStore, threading.Lock] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def register_write_lock(store: BaseStore, factory: LockFactory) -> None:
    """Make ``write_lock(store, name)`` also take ``factory(name)``, the cross-process lock."""
    _shared[store] = factory


@contextmanager
def write_lock(store: BaseStore, name: str) -> Iterator[None]:
    """Hold the store's write lock ``name`` for a read-check-write sequence."""
    with _guard:
        local = _local.setdefault(store, threading.Lock())
    factory = _shared.get(store)
    with local, factory(name) if factory is not None else nullcontext():
        yield


def file_lock(path: Path) -> LockFactory:
    """Return a lock factory backed by an exclusive ``flock`` on ``path`` (one lock per file)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: the process-local lock remains
        return lambda name: nullcontext()

    @contextmanager
    def hold(name: str) -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    return hold


class PostgresAdvisoryLock:
    """Postgres session advisory locks on a connection of their own, opened on first use."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._conn: Any = None

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """Hold the advisory lock for ``name`` (hashed to a lock key by the server)."""
        if self._conn is None:
            import psycopg

            self._conn = psycopg.connect(self._url, autocommit=True)
        key = f"engram:{name}"
        self._conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
        try:
            yield
        finally:
            self._conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    def close(self) -> None:
        """Close the lock connection (releasing any lock still held)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
