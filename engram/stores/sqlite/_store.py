"""LangGraph's ``SqliteStore`` as engram uses it: all-or-nothing batches, usable from async code."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from langgraph.store.base import Op, Result
from langgraph.store.sqlite import SqliteStore


class ThreadedSqliteStore(SqliteStore):
    """``SqliteStore`` whose batches are all-or-nothing and whose async API runs in a thread.

    LangGraph's ``SqliteStore`` commits a batch's transaction even when an operation in it
    failed, so a batch that stopped half-way (a full disk, a lock time-out, a bad value)
    stays half-written; here a failed batch is rolled back. It also only supports the sync
    API; engram's nodes are async, and one store must serve both the CLI (sync) and the graph
    (async) in the same process.
    """

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        if not self.is_setup:
            self.setup()
        with self.lock:
            if transaction:
                self.conn.execute("BEGIN")
            cur = self.conn.cursor()
            try:
                yield cur
            except BaseException:
                if transaction and self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            else:
                if transaction:
                    self.conn.execute("COMMIT")
            finally:
                cur.close()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch of operations off the event loop."""
        return await asyncio.to_thread(self.batch, list(ops))
