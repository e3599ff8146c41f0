"""Session listing: one SQL query on SQLite gives what the generic checkpoint walk gives."""

from __future__ import annotations

from datetime import UTC, datetime

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from engram.stores.sqlite import session_rows, sqlite_connect
from engram.stores.sqlite._backends import ThreadedSqliteSaver
from engram.stores.sqlite._session_listing import checkpoint_time


def _fill(saver) -> None:
    """Three threads in two projects, with 1, 2 and 3 checkpoints; one subgraph checkpoint."""
    for thread, project, count in (("a", "/p1", 1), ("b", "/p2", 2), ("c", "/p1", 3)):
        parent = None
        for step in range(count):
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            if parent:
                config["configurable"]["checkpoint_id"] = parent
            saved = saver.put(
                config,
                empty_checkpoint(),
                {"project": project, "title": f"task {thread}", "step": step},
                {},
            )
            parent = saved["configurable"]["checkpoint_id"]
    saver.put(
        {"configurable": {"thread_id": "c", "checkpoint_ns": "sub"}},
        empty_checkpoint(),
        {"project": "/p1"},
        {},
    )


def test_sqlite_fast_path_matches_the_generic_walk(tmp_path):
    sqlite = ThreadedSqliteSaver(sqlite_connect(tmp_path / "c.sqlite"))
    sqlite.setup()
    memory = InMemorySaver()
    _fill(sqlite)
    _fill(memory)
    for project in ("/p1", "/p2", None):
        fast = session_rows(sqlite, project)
        generic = session_rows(memory, project)
        strip = [
            {k: v for k, v in r.items() if k not in ("checkpoint_id", "updated")} for r in fast
        ]
        assert strip == [
            {k: v for k, v in r.items() if k not in ("checkpoint_id", "updated")} for r in generic
        ]
    rows = session_rows(sqlite, "/p1")
    assert [(r["thread_id"], r["checkpoints"], r["step"]) for r in rows] == [
        ("c", 3, 2),
        ("a", 1, 0),
    ]
    assert rows[0]["title"] == "task c"


def test_checkpoint_time_reads_the_uuid6_clock(tmp_path):
    saver = ThreadedSqliteSaver(sqlite_connect(tmp_path / "c.sqlite"))
    saver.setup()
    before = datetime.now(UTC)
    checkpoint = empty_checkpoint()
    saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {}, {})
    stamp = datetime.fromisoformat(checkpoint_time(checkpoint["id"]))
    assert abs((stamp - before).total_seconds()) < 5
    assert abs((stamp - datetime.fromisoformat(checkpoint["ts"])).total_seconds()) < 1
    assert checkpoint_time("not-a-uuid") == ""
    assert checkpoint_time("12345678-1234-4234-8234-123456789012") == ""
