"""Open LangGraph's own persistence: the memory store and the session checkpointer.

SQLite under ``ENGRAM_HOME`` by default; Postgres when a database URL is configured.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore, Op, Result

from engram.stores.errors import (
    BackendUnavailableError,
    DatabaseUnreadableError,
    DiskFullError,
    StoreReadOnlyError,
)
from engram.stores.sqlite_readonly import can_write, connect_read_only
from engram.stores.sqlite_store import ThreadedSqliteStore
from engram.stores.write_lock import (
    LockFactory,
    PostgresAdvisoryLock,
    file_lock,
    register_write_lock,
)

__all__ = [
    "CHECKPOINT_DB",
    "MEMORY_DB",
    "SyncSaverAsyncAPI",
    "ThreadedSqliteSaver",
    "ThreadedSqliteStore",
    "database_errors",
    "ReadOnlySqliteSaver",
    "ReadOnlySqliteStore",
    "database_url",
    "open_checkpointer",
    "open_memory_store",
    "open_read_only",
    "sqlite_connect",
    "sqlite_lock",
]

log = logging.getLogger(__name__)

MEMORY_DB = "memory.sqlite"
CHECKPOINT_DB = "checkpoints.sqlite"
SQLITE_BUSY_TIMEOUT_S = 30.0
PRIVATE_FILE_MODE = 0o600
SQLITE_PRIMARY_CODE = 0xFF
"""Mask of an extended SQLite result code's primary code (``SQLITE_READONLY_DBMOVED`` → 8)."""


def database_url() -> str:
    """Return the Postgres URL the environment names (``ENGRAM_DATABASE_URL``), or ""."""
    return os.environ.get("ENGRAM_DATABASE_URL", "")


def sqlite_lock(path: Path) -> LockFactory:
    """Return the cross-process lock of a SQLite file (a lock file beside it)."""
    return file_lock(path.with_name(path.name + ".lock"))


DATABASE_HINTS = {
    MEMORY_DB: "restore it: move the damaged file aside, then `engram memory import BACKUP`; "
               "`engram doctor` checks every store",
    CHECKPOINT_DB: "move the damaged file aside to start without saved sessions; "
                   "`engram doctor` checks every store",
}


IO_ERROR_HINT = ("check the disk (free space, `dmesg`) and run the command again; "
                 "`engram doctor` checks every store")
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
            raise StoreReadOnlyError(f"cannot write {path}: it can only be read here, "
                                     "so nothing was saved") from exc
        if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(path)):
            raise DiskFullError(f"the disk is full: cannot write {path}") from exc
        if code == sqlite3.SQLITE_IOERR:  # the disk failed, not necessarily the file
            raise DatabaseUnreadableError(f"cannot read or write {path}: {exc}",
                                          hint=IO_ERROR_HINT) from exc
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
            str(path), check_same_thread=False, isolation_level=None,
            timeout=SQLITE_BUSY_TIMEOUT_S,
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            conn.close()
            raise
    return conn


class SyncSaverAsyncAPI(BaseCheckpointSaver[Any]):
    """Mixin: the async checkpoint API of a sync-only saver, run in a worker thread.

    LangGraph's ``SqliteSaver`` and ``PostgresSaver`` implement only the sync API and guard
    their connection with a lock; engram's graph is async, and its CLI commands are sync, so
    both share one saver this way.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Fetch a checkpoint tuple."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """List checkpoints, newest first."""
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save pending writes of a task."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint of a thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        """Read channel history through the sync fast path."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


class ThreadedSqliteSaver(SyncSaverAsyncAPI, SqliteSaver):
    """``SqliteSaver`` usable from the async graph and the sync CLI alike."""


class ReadOnlySqliteStore(ThreadedSqliteStore):
    """The memory store of a home that cannot be written: reads work, a write says why not."""

    path: Path

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch; a write fails with ``StoreReadOnlyError`` naming the file."""
        with database_errors(self.path):
            return super().batch(ops)


class ReadOnlySqliteSaver(ThreadedSqliteSaver):
    """The session checkpointer of a home that cannot be written: sessions list and show."""

    path: Path

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Refuse to save a checkpoint with ``StoreReadOnlyError`` naming the file."""
        with database_errors(self.path):
            return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        """Refuse to save pending writes with ``StoreReadOnlyError`` naming the file."""
        with database_errors(self.path):
            super().put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Refuse to delete a session with ``StoreReadOnlyError`` naming the file."""
        with database_errors(self.path):
            super().delete_thread(thread_id)


ReadOnly = TypeVar("ReadOnly", ReadOnlySqliteStore, ReadOnlySqliteSaver)


@contextmanager
def open_read_only(path: Path, kind: type[ReadOnly]) -> Iterator[ReadOnly]:
    """Open a store or saver of ``kind`` on ``path`` for reading (its folder cannot be written).

    An existing file is trusted to have its tables (engram made them while the home was
    writable): LangGraph's ``setup`` writes. A missing one opens empty, with its tables.
    """
    with database_errors(path):
        conn = connect_read_only(path)
    try:
        opened = kind(conn)
        opened.path = path
        if path.exists():
            opened.is_setup = True
        else:
            opened.setup()
        conn.execute("PRAGMA query_only=ON")
        yield opened
    finally:
        conn.close()


@contextmanager
def _postgres(database_url: str) -> Iterator[None]:
    """Turn a missing Postgres driver or an unreachable server into ``BackendUnavailableError``."""
    try:
        import psycopg
    except ImportError as exc:
        raise BackendUnavailableError(
            "Postgres support is not installed", hint="pip install 'engram[postgres]'"
        ) from exc
    try:
        yield
    except psycopg.ProgrammingError as exc:
        if "connection" not in str(exc) and "dsn" not in str(exc).lower():
            raise
        # Not echoed: a malformed URL's error message quotes the URL, password included.
        raise BackendUnavailableError(
            "ENGRAM_DATABASE_URL is not a valid Postgres connection URL",
            hint="use postgresql://USER:PASSWORD@HOST:5432/DATABASE, or unset it for SQLite",
        ) from None
    except (OSError, psycopg.OperationalError) as exc:
        host = database_url.rsplit("@", 1)[-1]  # never echo the credentials
        raise BackendUnavailableError(
            f"cannot reach Postgres at {host}: {exc}", hint="check ENGRAM_DATABASE_URL"
        ) from exc


@contextmanager
def open_memory_store(home: Path, database_url: str = "") -> Iterator[BaseStore]:
    """Yield the memory store: ``SqliteStore`` in ``home`` or ``PostgresStore`` at a URL.

    Stored facts are migrated to the current record schema on open (``migrate_facts``).

    Raises:
        BackendUnavailableError: Postgres was asked for but cannot be reached or imported.
    """
    # The facts modules load BM25 and SciPy: only commands that open memory pay for them.
    from engram.stores.memory.fact_migration import migrate_facts

    if database_url:
        with _postgres(database_url):
            from langgraph.store.postgres import PostgresStore

            with PostgresStore.from_conn_string(database_url) as pg_store:
                pg_store.setup()
                advisory = PostgresAdvisoryLock(database_url)
                register_write_lock(pg_store, advisory)
                try:
                    migrate_facts(pg_store)
                    yield pg_store
                finally:
                    advisory.close()
        return
    if not can_write(home / MEMORY_DB):
        # Not migrated: ``Fact.from_record`` upgrades every record it reads.
        with open_read_only(home / MEMORY_DB, ReadOnlySqliteStore) as read_only:
            yield read_only
        return
    conn = sqlite_connect(home / MEMORY_DB)
    try:
        store = ThreadedSqliteStore(conn)
        lock = sqlite_lock(home / MEMORY_DB)
        with lock("setup"), database_errors(home / MEMORY_DB):  # one migration at a time
            store.setup()
        register_write_lock(store, lock)
        try:
            migrate_facts(store)
        except (sqlite3.OperationalError, OSError) as exc:
            # A read-only home: reads still work, and ``Fact.from_record`` applies the same
            # upgrade to every record it reads, so nothing old is trusted meanwhile.
            log.warning("facts not migrated in %s: %s", home / MEMORY_DB, exc)
        yield store
    finally:
        conn.close()


@contextmanager
def open_checkpointer(home: Path, database_url: str = "") -> Iterator[BaseCheckpointSaver]:
    """Yield the session checkpointer: ``SqliteSaver`` in ``home`` or ``PostgresSaver``."""
    if database_url:
        with _postgres(database_url):
            from langgraph.checkpoint.postgres import PostgresSaver

            class ThreadedPostgresSaver(SyncSaverAsyncAPI, PostgresSaver):
                """``PostgresSaver`` usable from the async graph and the sync CLI alike."""

            with ThreadedPostgresSaver.from_conn_string(database_url) as pg_saver:
                pg_saver.setup()
                yield pg_saver
        return
    if not can_write(home / CHECKPOINT_DB):
        with open_read_only(home / CHECKPOINT_DB, ReadOnlySqliteSaver) as read_only_saver:
            yield read_only_saver
        return
    conn = sqlite_connect(home / CHECKPOINT_DB)
    try:
        saver = ThreadedSqliteSaver(conn)
        with sqlite_lock(home / CHECKPOINT_DB)("setup"), database_errors(home / CHECKPOINT_DB):
            saver.setup()
        yield saver
    finally:
        conn.close()
