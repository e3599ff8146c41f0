from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import add_messages
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State
from engram.graph._budget import SUMMARY_CHUNK_CHARS
from engram.graph.compaction import Request, compact_now, emergency_compact
from engram.graph.compaction._history_rules import (
    SUMMARY_HEADER,
    SUMMARY_SECTIONS,
    is_summary,
    validate_history,
)
from engram.graph.compaction._summary_prompts import SUMMARY_INSTRUCTION
from engram.nodes import compact_history
from tests.support.state import state_of
from tests.unit.nodes.fake_models import RecordingChatModel

GOOD = "\n\n".join(f"## {s}\n- model note {i}" for i, s in enumerate(SUMMARY_SECTIONS))
BAD = "## User goals and constraints\n- only one section"


def words(text: str) -> int:
    return len(text.split())


def long_session(turns: int = 6, body: int = 400) -> list:
    msgs: list = []
    for t in range(turns):
        msgs.append(HumanMessage(f"turn {t}: keep the API stable; edit src/m{t}.py", id=f"u{t}"))
        msgs.append(
            AIMessage(
                "",
                tool_calls=[
                    {"name": "read_file", "args": {"path": f"src/m{t}.py"}, "id": f"c{t}a"},
                    {"name": "grep_code", "args": {"pattern": f"def f{t}"}, "id": f"c{t}b"},
                ],
                id=f"a{t}",
            )
        )
        msgs.append(
            ToolMessage(
                " ".join([f"body{t}"] * body), tool_call_id=f"c{t}a", name="read_file", id=f"t{t}a"
            )
        )
        msgs.append(
            ToolMessage(
                f"src/m{t}.py:3: def f{t}()", tool_call_id=f"c{t}b", name="grep_code", id=f"t{t}b"
            )
        )
        msgs.append(AIMessage(f"Decision {t}: use approach {t}.", id=f"d{t}"))
    return msgs


def model(*replies: str, fail: str = "") -> RecordingChatModel:
    return RecordingChatModel(responses=[AIMessage(r) for r in replies], seen=[], fail_with=fail)


def runtime(tmp_path, window: int = 32_000) -> Runtime:
    return Runtime(context=Context(project=str(tmp_path), context_window=window))


async def test_node_extractive_without_model(tmp_path):
    msgs = long_session()
    state = State(messages=msgs, system_prompt="you are a coding model")
    update = await compact_history(state, runtime(tmp_path), deps=Deps(count_tokens=words))
    assert isinstance(update["messages"][0], RemoveMessage)
    new = add_messages(msgs, update["messages"])
    assert validate_history(new) == []
    assert is_summary(new[0]) and new[0].content.startswith(SUMMARY_HEADER)
    assert isinstance(new[1], AIMessage) and not new[1].tool_calls
    assert new[2].id == "u3"  # tail starts at the 3rd-last user message
    assert [m.id for m in new[2:]] == [m.id for m in msgs[15:]]
    assert "turn 0: keep the API stable; edit src/m0.py" in new[0].content
    (event,) = update["compaction_log"]
    assert event["status"] == "committed" and event["source"] == "extractive"
    assert event["removed_count"] == 15 and event["tokens_after"] < event["tokens_before"]
    assert update["budget"]["decision"] == "ok"
    assert state_of(tmp_path, Path("~/.engram").expanduser()).path("ledger").exists()


async def test_model_summary_reuses_the_cached_prefix(tmp_path):
    msgs = long_session()
    fake = model(GOOD)
    deps = Deps(count_tokens=words, model_factory=lambda _: fake)
    state = State(messages=msgs, system_prompt="stable system prompt")
    update = await compact_history(state, runtime(tmp_path), deps=deps)
    (request,) = fake.seen
    assert isinstance(request[0], SystemMessage) and request[0].content == "stable system prompt"
    assert [m.id for m in request[1:-1]] == [m.id for m in msgs[:15]]
    assert request[-1].content == SUMMARY_INSTRUCTION
    new = add_messages(msgs, update["messages"])
    assert "model note 0" in new[0].content
    # the model dropped the user's instructions: they are restored verbatim
    for t in range(3):
        assert f"turn {t}: keep the API stable; edit src/m{t}.py" in new[0].content
    assert update["compaction_log"][0]["source"] == "model"


async def test_missing_sections_get_one_retry():
    fake = model(BAD, GOOD)
    result = await compact_now(long_session(), model=fake, request=Request(count=words))
    assert result.committed and result.source == "model"
    assert len(fake.seen) == 2
    assert "missing" in fake.seen[1][-1].content


async def test_still_invalid_summary_falls_back_to_extractive():
    fake = model(BAD, BAD)
    result = await compact_now(long_session(), model=fake, request=Request(count=words))
    assert len(fake.seen) == 2
    assert result.committed and result.source == "extractive"
    assert "lacks sections" in result.reason


async def test_model_failure_falls_back_to_extractive():
    fake = model(GOOD, fail="provider down")
    result = await compact_now(long_session(), model=fake, request=Request(count=words))
    assert result.committed and result.source == "extractive"
    assert "provider down" in result.reason


async def test_long_span_is_summarized_in_ordered_chunks_then_merged():
    msgs = long_session(turns=8, body=4_000)  # each read_file result ~ 24,000 chars
    fake = model(GOOD)
    result = await compact_now(msgs, model=fake, request=Request(count=words))
    assert result.committed and result.source == "model"
    prompts = [req[-1].content for req in fake.seen]
    assert len(prompts) == result.chunks >= 3
    assert all(len(p) <= SUMMARY_CHUNK_CHARS + len(SUMMARY_INSTRUCTION) + 500 for p in prompts[:-1])
    assert "part 1 of" in prompts[0] and "part 2 of" in prompts[1]
    assert "Merge them" in prompts[-1]
    assert "body0" in prompts[0] and "body4" not in prompts[0]


async def test_rollback_when_the_estimate_does_not_drop(tmp_path):
    msgs = long_session(turns=4, body=5)
    msgs.append(HumanMessage(" ".join(["huge"] * 50_000), id="last"))
    result = await compact_now(msgs, keep_users=1, request=Request(count=words))
    assert not result.committed and "did not drop" in result.reason
    assert result.messages == tuple(msgs) and result.update() == []
    state = State(messages=msgs)
    deps = Deps(count_tokens=words)
    update = await compact_history(state, runtime(tmp_path), deps=deps)
    assert "messages" not in update
    assert update["compaction_log"][0]["status"] == "rolled_back"
    assert update["notes"]


async def test_nothing_to_compact():
    msgs = long_session(turns=2)
    result = await compact_now(msgs, request=Request(count=words))
    assert not result.committed and result.reason == "nothing to compact"


async def test_manual_compact_keeps_only_the_last_turn():
    msgs = long_session()
    result = await compact_now(msgs, keep_users=1, request=Request(count=words))
    assert result.committed
    new = list(result.messages)
    assert [m.id for m in new[2:]] == [m.id for m in msgs[25:]]
    assert validate_history(new) == []


async def test_system_message_in_history_is_kept_first():
    msgs = [SystemMessage("sys", id="s"), *long_session()]
    result = await compact_now(msgs, request=Request(count=words))
    assert result.messages[0].id == "s" and is_summary(result.messages[1])


def test_emergency_compact_shrinks_without_a_model():
    msgs = long_session()
    result = emergency_compact(msgs, request=Request(count=words))
    assert result.committed and result.tokens_after < result.tokens_before
    new = add_messages(msgs, result.update())
    assert validate_history(new) == []
    assert new[-1].id == msgs[-1].id
    assert "turn 5: keep the API stable" in "".join(str(m.content) for m in new)


def test_emergency_compact_single_turn_clears_tool_results():
    msgs = long_session(turns=1)
    msgs += [
        AIMessage("", tool_calls=[{"name": "read_file", "args": {}, "id": "z"}], id="az"),
        ToolMessage("tail " * 500, tool_call_id="z", id="tz"),
    ]
    result = emergency_compact(msgs, request=Request(count=words))
    assert result.committed
    assert validate_history(list(result.messages)) == []
    assert len(result.messages) == len(msgs)


@pytest.mark.parametrize("keep", [1, 2, 3])
async def test_latest_request_survives_verbatim(keep):
    msgs = long_session()
    result = await compact_now(msgs, keep_users=keep, request=Request(count=words))
    humans = [m for m in result.messages if isinstance(m, HumanMessage) and not is_summary(m)]
    assert humans[-1].content == msgs[25].content


async def test_summary_length_follows_the_window(tmp_path):
    msgs = long_session(turns=60, body=5)
    for window in (4_096, 32_000):
        update = await compact_history(
            State(messages=msgs), runtime(tmp_path, window), deps=Deps(count_tokens=words)
        )
        new = add_messages(msgs, update["messages"])
        cap = min(20_000, max(1_000, window // 4)) * 3
        assert len(new[0].content) <= cap + len(SUMMARY_HEADER) + 1
        if window == 4_096:
            assert "earlier entries omitted" in new[0].content
