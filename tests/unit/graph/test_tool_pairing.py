"""Closing unanswered tool calls: the repaired history always passes the endpoint's rules."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import add_messages

from engram.graph.compaction import close_unanswered_calls, commit_messages
from engram.graph.compaction._history_rules import validate_history
from engram.graph.compaction._tool_pairing import NOT_RUN
from tests.unit.graph.history_strategies import histories

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _calls(*ids: str) -> AIMessage:
    return AIMessage(
        content="",
        id=f"ai-{ids[0]}",
        tool_calls=[{"name": "grep_code", "args": {"pattern": i}, "id": i} for i in ids],
    )


def _result(call_id: str) -> ToolMessage:
    return ToolMessage(content="out", tool_call_id=call_id, name="grep_code", id=f"t-{call_id}")


def test_a_fork_at_a_pending_tool_step_followed_by_a_new_request_is_closed():
    history = [
        HumanMessage(content="task", id="h1"),
        _calls("c1", "c2"),
        _result("c1"),
        HumanMessage(content="new task", id="h2"),
    ]
    assert validate_history(history)
    repair = close_unanswered_calls(history)
    assert repair is not None and validate_history(repair.messages) == []
    assert [m.id for m in repair.messages] == ["h1", "ai-c1", "t-c1", "not-run-c2", "h2"]
    closing = repair.messages[3]
    assert isinstance(closing, ToolMessage) and closing.tool_call_id == "c2"
    assert closing.content == NOT_RUN and closing.status == "error"
    assert repair.dropped == [] and "closed 1 tool call" in repair.note()


def test_orphan_and_duplicate_results_are_dropped():
    history = [
        SystemMessage(content="sys"),
        HumanMessage(content="t", id="h1"),
        _result("ghost"),
        _calls("c1"),
        _result("c1"),
        _result("c1"),
    ]
    repair = close_unanswered_calls(history)
    assert repair is not None and validate_history(repair.messages) == []
    assert len(repair.dropped) == 2 and repair.closed == []


def test_a_paired_history_needs_no_repair():
    assert (
        close_unanswered_calls(
            [
                HumanMessage(content="t", id="h"),
                _calls("c"),
                _result("c"),
                AIMessage(content="done", id="a"),
            ]
        )
        is None
    )


def test_the_repair_commits_through_the_reducer():
    history = add_messages(
        [], [HumanMessage(content="t"), _calls("c1"), HumanMessage(content="next")]
    )
    repair = close_unanswered_calls(history)
    assert repair is not None
    assert validate_history(add_messages(history, commit_messages(repair.messages))) == []


@SETTINGS
@given(histories(), st.data())
def test_any_history_with_results_removed_and_requests_inserted_is_repaired(msgs, data):
    broken = list(msgs)
    for _ in range(data.draw(st.integers(0, 4))):
        tools = [i for i, m in enumerate(broken) if isinstance(m, ToolMessage)]
        if tools:
            del broken[data.draw(st.sampled_from(tools))]
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(broken)))
        broken.insert(at, HumanMessage(content="new request"))
    repair = close_unanswered_calls(broken)
    fixed = broken if repair is None else repair.messages
    # The repair is about pairing; a request inserted first is not its business.
    assert all("first non-system message" in p for p in validate_history(fixed))
    kept = [m for m in fixed if not isinstance(m, ToolMessage)]
    assert kept == [m for m in broken if not isinstance(m, ToolMessage)]
