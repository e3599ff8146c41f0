from __future__ import annotations

import asyncio
import sqlite3

import pytest
from langgraph.store.base import PutOp

from engram.stores._errors import BackendUnavailableError
from engram.stores.sqlite import open_checkpointer, open_memory_store

UNREACHABLE = "postgresql://user:s3cretpw@127.0.0.1:9/engram"


@pytest.mark.parametrize("opener", [open_memory_store, open_checkpointer])
def test_unreachable_postgres_is_a_clear_error_without_the_password(tmp_path, opener):
    with pytest.raises(BackendUnavailableError) as info, opener(tmp_path, UNREACHABLE):
        pass
    assert "127.0.0.1:9" in str(info.value) and "s3cretpw" not in str(info.value)
    assert "ENGRAM_DATABASE_URL" in info.value.hint


def test_sqlite_store_serves_sync_and_async_callers(tmp_path):
    with open_memory_store(tmp_path) as store:
        store.put(("facts", "global"), "a", {"text": "sync"})
        asyncio.run(store.abatch([PutOp(("facts", "global"), "b", {"text": "async"})]))
        texts = {item.value["text"] for item in store.search(("facts", "global"))}
    assert texts == {"sync", "async"}
    assert (tmp_path / "memory.sqlite").exists()


def test_a_batch_that_fails_half_way_leaves_nothing_written(tmp_path, monkeypatch):
    with open_memory_store(tmp_path) as store:
        store.put(("facts", "global"), "kept", {"text": "before"})
        real = type(store)._batch_put_ops

        def put_then_fail(self, ops, cur):  # noqa: ANN001, ANN202
            real(self, ops, cur)  # the rows are written inside the transaction…
            raise sqlite3.OperationalError("database or disk is full")  # …then the batch fails

        monkeypatch.setattr(type(store), "_batch_put_ops", put_then_fail)
        with pytest.raises(sqlite3.OperationalError):
            store.batch(
                [
                    PutOp(("facts", "global"), "new", {"text": "half"}),
                    PutOp(("facts", "global"), "kept", {"text": "changed"}),
                ]
            )
        monkeypatch.undo()
        texts = {item.key: item.value["text"] for item in store.search(("facts", "global"))}
        store.put(("facts", "global"), "after", {"text": "still writable"})
        assert store.get(("facts", "global"), "after") is not None
    assert texts == {"kept": "before"}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://user:s3cretpw@127.0.0.1:5432/db?frobnicate=1",
        "postgresql://user:s3cretpw@[::1/db",
        "postgresql://user:s3cret@pw-part@127.0.0.1/db",
    ],
)
@pytest.mark.parametrize("opener", [open_memory_store, open_checkpointer])
def test_a_malformed_postgres_url_is_refused_before_connecting(tmp_path, opener, url):
    with pytest.raises(BackendUnavailableError) as info, opener(tmp_path, url):
        pass
    said = f"{info.value} {info.value.hint}"
    assert "ENGRAM_DATABASE_URL is not a valid Postgres connection URL" in said
    assert "s3cret" not in said and "pw-part" not in said
    error = info.value  # nothing chained: the driver's own error quotes the URL
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
