"""Open LangGraph's own persistence: the memory store and the session checkpointer.

SQLite under ``ENGRAM_HOME`` by default; Postgres when a database URL is configured.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
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
from langgraph.store.base import BaseStore

from engram.stores._write_lock import PostgresAdvisoryLock, register_write_lock
from engram.stores.sqlite._files import (
    CHECKPOINT_DB,
    MEMORY_DB,
    database_errors,
    sqlite_connect,
    sqlite_lock,
)
from engram.stores.sqlite._guarded import GuardedSaverMixin, GuardedStoreMixin
from engram.stores.sqlite._postgres import (
    GuardedPostgresSaverMixin,
    GuardedPostgresStoreMixin,
    check_database_url,
    postgres_errors,
    quiet_driver_noise,
)
from engram.stores.sqlite._readonly import can_write, connect_read_only
from engram.stores.sqlite._store import ThreadedSqliteStore

log = logging.getLogger(__name__)


def database_url() -> str:
    """Return the Postgres URL the environment names (``ENGRAM_DATABASE_URL``), or ""."""
    return os.environ.get("ENGRAM_DATABASE_URL", "")


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


class ReadOnlySqliteStore(GuardedStoreMixin, ThreadedSqliteStore):
    """The memory store of a home that cannot be written: reads work, a write says why not."""

    path: Path

    def guard(self) -> AbstractContextManager[None]:
        """A write fails with ``StoreReadOnlyError`` naming the file."""
        return database_errors(self.path)


class ReadOnlySqliteSaver(GuardedSaverMixin, ThreadedSqliteSaver):
    """The session checkpointer of a home that cannot be written: sessions list and show."""

    path: Path

    def guard(self) -> AbstractContextManager[None]:
        """A write fails with ``StoreReadOnlyError`` naming the file."""
        return database_errors(self.path)


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
    """Check the URL, then report the server's connection failures once, password masked."""
    check_database_url(database_url)
    quiet_driver_noise()
    with postgres_errors(database_url):
        yield


@contextmanager
def open_memory_store(home: Path, database_url: str = "") -> Iterator[BaseStore]:
    """Yield the memory store: ``SqliteStore`` in ``home`` or ``PostgresStore`` at a URL.

    Stored facts are migrated to the current record schema on open (``migrate_facts``).

    Raises:
        BackendUnavailableError: Postgres was asked for but cannot be reached or imported.
    """
    # The facts modules load BM25 and SciPy: only commands that open memory pay for them.
    from engram.stores.memory import migrate_facts

    if database_url:
        with _postgres(database_url):
            from langgraph.store.postgres import PostgresStore

            class GuardedPostgresStore(GuardedPostgresStoreMixin, PostgresStore):
                """``PostgresStore`` whose lost connection is a ``BackendUnavailableError``."""

                url = database_url

            with GuardedPostgresStore.from_conn_string(database_url) as pg_store:
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

            class ThreadedPostgresSaver(
                SyncSaverAsyncAPI, GuardedPostgresSaverMixin, PostgresSaver
            ):
                """``PostgresSaver`` usable from the async graph and the sync CLI alike."""

                url = database_url

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
