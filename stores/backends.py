"""Open LangGraph's own persistence: the memory store and the session checkpointer.

SQLite under ``ENGRAM_HOME`` by default; Postgres when a database URL is configured.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from stores.errors import BackendUnavailableError

__all__ = ["MEMORY_DB", "CHECKPOINT_DB", "open_checkpointer", "open_memory_store", "sqlite_connect"]

MEMORY_DB = "memory.sqlite"
CHECKPOINT_DB = "checkpoints.sqlite"
SQLITE_BUSY_TIMEOUT_S = 30.0


def sqlite_connect(path: Path) -> sqlite3.Connection:
    """Open a SQLite file for several processes at once (WAL, busy timeout, autocommit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), check_same_thread=False, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT_S
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@contextmanager
def open_memory_store(home: Path, database_url: str = "") -> Iterator[BaseStore]:
    """Yield the memory store: ``SqliteStore`` in ``home`` or ``PostgresStore`` at a URL.

    Raises:
        BackendUnavailableError: Postgres was asked for but cannot be reached or imported.
    """
    if database_url:
        try:
            from langgraph.store.postgres import PostgresStore
        except ImportError as exc:
            raise BackendUnavailableError(
                "Postgres support is not installed", hint="pip install 'engram[postgres]'"
            ) from exc
        try:
            with PostgresStore.from_conn_string(database_url) as pg_store:
                pg_store.setup()
                yield pg_store
        except OSError as exc:
            raise BackendUnavailableError(f"cannot reach Postgres: {exc}") from exc
        return
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite_connect(home / MEMORY_DB)
    try:
        store = SqliteStore(conn)
        store.setup()
        yield store
    finally:
        conn.close()


@contextmanager
def open_checkpointer(home: Path, database_url: str = "") -> Iterator[BaseCheckpointSaver]:
    """Yield the session checkpointer: ``SqliteSaver`` in ``home`` or ``PostgresSaver``."""
    if database_url:
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError as exc:
            raise BackendUnavailableError(
                "Postgres support is not installed", hint="pip install 'engram[postgres]'"
            ) from exc
        with PostgresSaver.from_conn_string(database_url) as pg_saver:
            pg_saver.setup()
            yield pg_saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite_connect(home / CHECKPOINT_DB)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()
