"""The ledger keeps each message version once and rebuilds every model request exactly."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engram.stores import Ledger, message_record

TOOLS = [{"type": "function", "function": {"name": "grep_code", "parameters": {}}}]


def test_versions_are_recorded_once_and_edits_as_new_versions(tmp_path: Path):
    ledger = Ledger(tmp_path)
    user = HumanMessage(content="fix it", id="h1")
    assert ledger.append_messages("t", [user]) == 1
    assert ledger.append_messages("t", [user]) == 0
    augmented = HumanMessage(content="fix it\n\n[context pack]", id="h1")
    assert ledger.append_messages("t", [user, augmented]) == 1
    records = [e for e in ledger.read("t") if e["kind"] == "message"]
    assert [r["content"] for r in records] == ["fix it", "fix it\n\n[context pack]"]
    assert records[0]["sha"] != records[1]["sha"]


def test_model_calls_rebuild_each_request_in_order(tmp_path: Path):
    ledger = Ledger(tmp_path)
    system = SystemMessage(content="you are engram")
    user = HumanMessage(content="task\n\n[pack]", id="h1")
    call = AIMessage(
        content="", id="a1", tool_calls=[{"name": "grep_code", "args": {}, "id": "c1"}]
    )
    result = ToolMessage(content="hit", tool_call_id="c1", name="grep_code", id="t1")
    ledger.append_model_call("t", [system, user], TOOLS, step=1)
    ledger.append_model_call("t", [system, user, call, result], TOOLS, step=2)
    kinds = [e["kind"] for e in ledger.read("t")]
    assert kinds.count("tools") == 1 and kinds.count("model_call") == 2
    assert kinds.count("message") == 4  # the system prompt and each message once
    calls = ledger.model_calls("t")
    assert [c["step"] for c in calls] == [1, 2]
    assert calls[1]["messages"] == [message_record(m) for m in (system, user, call, result)]
    assert calls[0]["tools"] == TOOLS
