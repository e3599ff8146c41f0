from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engram.stores import Ledger


def test_append_and_read_back(tmp_path: Path):
    ledger = Ledger.for_project(tmp_path / "project", tmp_path / "home")
    ledger.append_messages(
        "t/1",
        [
            HumanMessage(content="hi", id="h1"),
            AIMessage(
                content="",
                id="a1",
                tool_calls=[{"name": "grep_code", "args": {"pattern": "x"}, "id": "c1"}],
            ),
            ToolMessage(content="out", tool_call_id="c1", name="grep_code", id="t1"),
        ],
    )
    ledger.append("t/1", "compaction", {"tier": 3, "removed": 2})
    events = list(ledger.read("t/1"))
    assert [e["kind"] for e in events] == ["message"] * 3 + ["compaction"]
    assert events[1]["tool_calls"][0]["id"] == "c1"
    assert events[2]["tool_call_id"] == "c1"
    assert ledger.path("t/1").name == "t_1.jsonl"
    assert ledger.path("t/1").is_relative_to(tmp_path / "home" / "projects")


def test_torn_last_line_is_skipped(tmp_path: Path):
    ledger = Ledger(tmp_path)
    ledger.append("t", "message", {"content": "ok"})
    with ledger.path("t").open("a") as handle:
        handle.write('{"kind": "mess')
    assert [e["content"] for e in ledger.read("t")] == ["ok"]
    assert list(ledger.read("missing")) == []
