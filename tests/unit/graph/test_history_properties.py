"""Property tests: no compaction tier can ever produce an invalid history.

Fast profile by default; the benchmark runs the same properties with
``ENGRAM_PROPERTY_EXAMPLES=2000``.
"""

from __future__ import annotations

import asyncio
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import add_messages

from engram.graph.compaction import Request, clear_pass, compact_now, emergency_compact
from engram.graph.compaction._history_rules import is_summary, missing_sections, validate_history
from tests.unit.graph.history_strategies import histories

EXAMPLES = int(os.environ.get("ENGRAM_PROPERTY_EXAMPLES", "30"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def last_user(messages) -> str:
    users = [m for m in messages if isinstance(m, HumanMessage) and not is_summary(m)]
    return str(users[-1].content)


@SETTINGS
@given(histories())
def test_generated_histories_are_valid(msgs):
    assert validate_history(msgs) == []


@SETTINGS
@given(histories(), st.integers(0, 5))
def test_clear_tier_keeps_validity_ids_and_count(msgs, keep):
    result = clear_pass(msgs, Request(), min_saving=1, keep_recent=keep)
    new = add_messages(msgs, result.update())
    assert validate_history(new) == []
    assert [m.id for m in new] == [m.id for m in msgs]
    assert [getattr(m, "tool_call_id", None) for m in new] == [
        getattr(m, "tool_call_id", None) for m in msgs
    ]
    tools = [i for i, m in enumerate(msgs) if isinstance(m, ToolMessage)]
    for i in tools[len(tools) - keep :] if keep else []:
        assert new[i].content == msgs[i].content


@SETTINGS
@given(histories(), st.integers(1, 3))
def test_summarize_tier_is_valid_and_keeps_latest_request(msgs, keep):
    result = asyncio.run(compact_now(msgs, keep_users=keep, min_drop=0.0))
    new = add_messages(msgs, result.update()) if result.committed else msgs
    assert validate_history(new) == []
    assert last_user(new) == last_user(msgs)
    if result.committed:
        assert missing_sections(result.summary) == []
        assert is_summary(next(m for m in new if isinstance(m, HumanMessage)))
        assert [m.content for m in new] == [m.content for m in result.messages]


@SETTINGS
@given(histories())
def test_emergency_compaction_is_valid(msgs):
    result = emergency_compact(msgs)
    new = add_messages(msgs, result.update()) if result.committed else msgs
    assert validate_history(new) == []
    assert last_user(new) == last_user(msgs)
    if result.committed:
        assert result.tokens_after < result.tokens_before


@SETTINGS
@given(histories(), st.data())
def test_validator_catches_a_cut_between_call_and_result(msgs, data):
    calls = [i for i, m in enumerate(msgs) if isinstance(m, AIMessage) and m.tool_calls]
    if not calls:
        return
    i = data.draw(st.sampled_from(calls))
    broken = msgs[:i] + msgs[i + 1 :]  # drop the assistant message, orphaning its results
    assert validate_history(broken)
    j = i + 1  # its first tool result
    broken = msgs[:j] + msgs[j + 1 :]
    assert validate_history(broken)
