from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from engram.graph import (
    State,
    budget_partitions,
    estimate_messages,
    render_system_prompt,
    render_turn_context,
    request_for,
)
from engram.graph._budget_request import pending_turn_context


def words(text: str) -> int:
    return len(text.split())


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return path


def state(appended: bool = False) -> State:
    memory = "remember this fact"
    user = "fix it"
    if appended:
        user = f"{user}\n\n{render_turn_context(memory)}"
    return State(
        system_prompt=render_system_prompt("rule one\nrule two"),
        memory_block=memory,
        messages=[
            HumanMessage(user, id="u"),
            AIMessage(
                "", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c"}], id="a"
            ),
            ToolMessage("one two three four", tool_call_id="c", id="t"),
        ],
    )


def test_pending_turn_context_until_appended():
    assert "remember this fact" in pending_turn_context(state())
    assert pending_turn_context(state(appended=True)) == ""
    assert pending_turn_context(State()) == ""


def test_request_for_counts_schemas_and_pending_context():
    s = state()
    request = request_for(s, [read_file], words)
    assert request.tool_schemas and request.tool_schemas[0]["function"]["name"] == "read_file"
    assert request.extra_tokens == words(pending_turn_context(s))
    assert request.estimate(s.messages) == request.extra_tokens + estimate_messages(
        s.messages, system_prompt=s.system_prompt, tool_schemas=request.tool_schemas, count=words
    )


def test_partitions_add_up_and_separate_rules():
    for appended in (False, True):
        s = state(appended)
        parts = budget_partitions(s, [read_file], words)
        assert parts["rules"] == words("\n\nProject and team rules:\nrule one\nrule two")
        assert parts["memory"] == 3 and parts["tool_results"] > 4
        assert set(parts) == {
            "system",
            "rules",
            "tools",
            "memory",
            "code_context",
            "history",
            "tool_results",
        }
        assert all(v >= 0 for v in parts.values())
