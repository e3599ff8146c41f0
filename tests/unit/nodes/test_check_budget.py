from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import add_messages
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State, route_after_check_budget, thresholds
from engram.graph.compaction._history_rules import is_cleared, validate_history
from engram.nodes import check_budget
from tests.support.state import state_of


def words(text: str) -> int:
    return len(text.split())


def history(rounds: int, body_words: int) -> list:
    msgs: list = [HumanMessage("start the work", id="u0")]
    for i in range(rounds):
        msgs.append(
            AIMessage(
                "",
                tool_calls=[{"name": "read_file", "args": {"path": f"f{i}.py"}, "id": f"c{i}"}],
                id=f"a{i}",
            )
        )
        msgs.append(
            ToolMessage(
                " ".join(["w"] * body_words), tool_call_id=f"c{i}", name="read_file", id=f"t{i}"
            )
        )
    return msgs


@pytest.fixture
def runtime(tmp_path):
    def make(window: int) -> Runtime:
        return Runtime(context=Context(project=str(tmp_path), context_window=window))

    return make


DEPS = Deps(count_tokens=words)


async def test_under_threshold_is_ok(runtime):
    state = State(messages=history(2, 10))
    update = check_budget(state, runtime(128_000), deps=DEPS)
    assert update["budget"]["decision"] == "ok"
    assert "messages" not in update
    assert update["budget"]["trigger"] == 95_000 and update["budget"]["clear"] == 57_000


async def test_clear_tier_rewrites_old_results_once(runtime):
    limits = thresholds(32_000)  # clear 12,000, trigger 20,000
    msgs = history(10, 1_500)  # ~15,000 words of tool output
    state = State(messages=msgs)
    update = check_budget(state, runtime(32_000), deps=DEPS)
    assert update["budget"]["decision"] == "clear"
    assert update["budget"]["estimate"] < limits.trigger
    replaced = update["messages"]
    assert [m.id for m in replaced] == [f"t{i}" for i in range(7)]  # 3 most recent kept
    merged = add_messages(msgs, replaced)
    assert len(merged) == len(msgs) and validate_history(merged) == []
    assert sum(is_cleared(m) for m in merged) == 7
    (event,) = update["compaction_log"]
    assert event["tier"] == "clear" and event["status"] == "committed"
    assert event["tokens_after"] < event["tokens_before"]
    # the edit is in state now: a second check does not re-fire
    again = check_budget(
        State(messages=merged, budget=update["budget"]), runtime(32_000), deps=DEPS
    )
    assert "messages" not in again and again["budget"]["decision"] == "ok"


async def test_small_batch_is_not_worth_the_cache_miss(runtime):
    msgs = history(4, 10) + [HumanMessage(" ".join(["q"] * 12_500), id="big")]
    update = check_budget(State(messages=msgs), runtime(32_000), deps=DEPS)
    assert "messages" not in update
    assert update["budget"]["decision"] == "ok"


async def test_over_trigger_after_clearing_asks_for_summary(runtime):
    msgs = history(3, 10) + [HumanMessage(" ".join(["q"] * 21_000), id="big")]
    update = check_budget(State(messages=msgs), runtime(32_000), deps=DEPS)
    assert update["budget"]["decision"] == "summarize"
    assert route_after_check_budget(State(messages=msgs, budget=update["budget"])) == (
        "compact_history"
    )
    assert route_after_check_budget(State(messages=msgs)) == "call_model"


async def test_reconciles_with_reported_usage(runtime):
    state = State(messages=history(2, 100))
    first = check_budget(state, runtime(128_000), deps=DEPS)
    raw = first["budget"]["raw_estimate"]
    state = State(messages=history(2, 100), budget=first["budget"], last_usage={"input": raw * 2})
    second = check_budget(state, runtime(128_000), deps=DEPS)
    assert second["budget"]["estimate"] == raw * 2


async def test_turn_context_counted_until_appended(runtime):
    base = check_budget(State(messages=history(1, 5)), runtime(128_000), deps=DEPS)
    memory = "remember " * 100
    pending = check_budget(
        State(messages=history(1, 5), memory_block=memory), runtime(128_000), deps=DEPS
    )
    assert pending["budget"]["raw_estimate"] >= base["budget"]["raw_estimate"] + 100
    from engram.graph import render_turn_context

    appended = history(1, 5)
    appended[0] = HumanMessage(f"start the work\n\n{render_turn_context(memory)}", id="u0")
    done = check_budget(State(messages=appended, memory_block=memory), runtime(128_000), deps=DEPS)
    assert done["budget"]["raw_estimate"] == pending["budget"]["raw_estimate"]


async def test_rolled_back_summary_does_not_refire_until_next_user_turn(runtime):
    msgs = history(3, 10) + [HumanMessage(" ".join(["q"] * 21_000), id="big")]
    users = sum(isinstance(m, HumanMessage) for m in msgs)
    log = [{"tier": "summarize", "status": "rolled_back", "user_turns": users}]
    update = check_budget(State(messages=msgs, compaction_log=log), runtime(32_000), deps=DEPS)
    assert update["budget"]["decision"] == "ok" and update["notes"]
    msgs.append(AIMessage("ok", id="r"))
    msgs.append(HumanMessage("next", id="n"))
    update = check_budget(State(messages=msgs, compaction_log=log), runtime(32_000), deps=DEPS)
    assert update["budget"]["decision"] == "summarize"


async def test_ledger_records_clear_event(runtime, tmp_path):
    check_budget(State(messages=history(10, 1_500)), runtime(32_000), deps=DEPS)
    ledger = list(state_of(tmp_path, Path("~/.engram").expanduser()).path("ledger").glob("*.jsonl"))
    assert ledger and '"compaction"' in ledger[0].read_text()


async def test_clear_tier_also_clears_context_of_earlier_turns(runtime):
    from engram.graph import render_turn_context
    from engram.graph.compaction._history_rules import CONTEXT_CLEARED

    block = render_turn_context(" ".join(["ctx"] * 4_000))
    msgs = []
    for t in range(4):
        msgs += [HumanMessage(f"turn {t}\n\n{block}", id=f"u{t}"), AIMessage(f"ok {t}", id=f"a{t}")]
    update = check_budget(State(messages=msgs), runtime(32_000), deps=DEPS)
    assert update["budget"]["decision"] == "clear"
    replaced = update["messages"]
    assert [m.id for m in replaced] == ["u0", "u1", "u2"]  # the latest turn keeps its context
    assert all(m.content.endswith(CONTEXT_CLEARED) for m in replaced)
    assert replaced[0].content.startswith("turn 0")
