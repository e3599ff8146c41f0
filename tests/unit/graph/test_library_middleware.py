"""engram's middleware inside LangChain's own ``create_agent``: each hook runs and does its job.

The agent's model is a fake chat model that records every request it receives; budgets use a
word counter, so the thresholds are crossed exactly where the test says.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from engram.api import BudgetMiddleware, ContextPackMiddleware, MemoryMiddleware, engram_tools
from engram.api._middleware import EngramAgentState
from engram.graph.compaction._history_rules import CLEARED_PREFIX, validate_history
from engram.stores.files._spill import SPILL_DIR, SPILL_FOLDER
from engram.stores.memory import FactStore
from engram.stores.project import project_key
from tests.support.state import state_of
from tests.unit.nodes.fake_models import RecordingChatModel

WINDOW = 4_000
"""Trigger 2,000 and clearing threshold 1,200 tokens (see ``engram.graph._budget``)."""
FACT = "Totals are computed in cents, never floats"


def words(text: str) -> int:
    return len(text.split())


pytestmark = pytest.mark.usefixtures("python_grep")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "cart.py").write_text("def cart_total(prices):\n    return sum(prices)\n")
    return root


def model_saying(*replies: AIMessage) -> RecordingChatModel:
    return RecordingChatModel(seen=[], responses=list(replies))


def tool_round(n: int, size: int) -> list[BaseMessage]:
    call_id = f"call_{n}"
    return [
        AIMessage(
            "",
            tool_calls=[{"name": "read_file", "id": call_id, "args": {"path": "x"}}],
            id=f"ai_{n}",
        ),
        ToolMessage(
            " ".join(["data"] * size), tool_call_id=call_id, name="read_file", id=f"tool_{n}"
        ),
    ]


def run(agent: Any, messages: list[BaseMessage]) -> dict[str, Any]:
    return agent.invoke({"messages": messages})


def run_with_budget(history: list[BaseMessage]) -> tuple[dict[str, Any], list[BaseMessage]]:
    """Run an agent with BudgetMiddleware on ``history``; return its state and the request."""
    model = model_saying(AIMessage("done"))
    agent = create_agent(model, middleware=[BudgetMiddleware(context_window=WINDOW, count=words)])
    state = run(agent, history)
    (seen,) = model.seen
    return state, seen


def test_memory_and_pack_are_appended_to_the_user_turn(project, engram_home):
    store = InMemoryStore()
    FactStore(store).add(
        FACT,
        scope="project",
        project_key=project_key(project),
        source="user",
        now=datetime.now(UTC),
    )
    model = model_saying(AIMessage("done"))
    agent = create_agent(
        model,
        middleware=[
            MemoryMiddleware(store, project),
            ContextPackMiddleware(project, budget=1_000, store=store),
        ],
    )
    state = run(agent, [HumanMessage("how are cart_total totals computed?")])
    (request,) = model.seen
    user = next(m for m in request if isinstance(m, HumanMessage))
    assert user.text.startswith("how are cart_total totals computed?\n\n[engram context]")
    assert FACT in user.text and "clues, not facts" in user.text
    assert '<section name="slices">' in user.text and "def cart_total(prices):" in user.text
    assert state["messages"][0].text == user.text  # written to state: the prefix stays cached
    assert state["messages"][-1].content == "done"


async def test_the_hooks_run_under_ainvoke_too(project, engram_home):
    store = InMemoryStore()
    FactStore(store).add(
        FACT,
        scope="project",
        project_key=project_key(project),
        source="user",
        now=datetime.now(UTC),
    )
    model = model_saying(AIMessage("done"))
    agent = create_agent(
        model,
        middleware=[MemoryMiddleware(store, project), BudgetMiddleware(context_window=WINDOW)],
    )
    state = await agent.ainvoke({"messages": [HumanMessage("what do totals use?")]})
    assert FACT in model.seen[0][0].text
    assert state["engram_budget"]["decision"] == "ok"


def test_budget_check_reports_each_call(project):
    model = model_saying(AIMessage("done"))
    agent = create_agent(
        model,
        middleware=[BudgetMiddleware(context_window=WINDOW, count=words, system_prompt="be brief")],
    )
    state = run(agent, [HumanMessage("one two three")])
    budget = state["engram_budget"]
    assert (budget["window"], budget["trigger"], budget["clear"]) == (WINDOW, 2_000, 1_200)
    assert budget["decision"] == "ok" and 5 < budget["estimate"] < 50


def test_past_the_clearing_threshold_old_tool_results_become_placeholders(project):
    history: list[BaseMessage] = [HumanMessage("look at the data", id="h1")]
    for n in range(6):
        history += tool_round(n, 250)
    history.append(HumanMessage("and now?", id="h2"))
    state, seen = run_with_budget(history)
    results = [m for m in seen if isinstance(m, ToolMessage)]
    assert len(results) == 6 and not validate_history(seen)
    cleared = [m for m in results if m.text.startswith(CLEARED_PREFIX)]
    assert len(cleared) == 3 and results[-1].text.startswith("data")
    (event,) = state["engram_compaction"]
    assert (event["tier"], event["status"]) == ("clear", "committed")
    budget = state["engram_budget"]
    assert budget["applied"] == ["clear"] and budget["rolled_back"] == []
    assert budget["cleared_results"] == 3
    # The decision is where the request the model got stands: under the threshold now.
    assert budget["estimate"] < budget["clear"] and budget["decision"] == "ok"


def test_the_report_never_says_ok_for_a_request_over_the_trigger(project):
    """Nothing can be cleared or summarized: the report says so instead of "ok"."""
    state, seen = run_with_budget([HumanMessage("word " * 2_500, id="only")])
    budget = state["engram_budget"]
    assert budget["estimate"] >= budget["trigger"]
    assert budget["decision"] == "summarize"
    assert budget["applied"] == [] and budget["rolled_back"] == ["clear", "summarize"]
    assert [e["status"] for e in state["engram_compaction"]] == ["rolled_back", "rolled_back"]
    assert budget["cleared_results"] == 0 and seen[-1].id == "only"


def test_past_the_trigger_older_turns_become_a_summary(project):
    history: list[BaseMessage] = []
    for n in range(4):
        history += [
            HumanMessage(f"request {n} " + "detail " * 600, id=f"h{n}"),
            AIMessage(f"answer {n}", id=f"a{n}"),
        ]
    history.append(HumanMessage("the newest request", id="h_last"))
    state, seen = run_with_budget(history)
    assert not validate_history(seen)
    assert "request 0" not in " ".join(m.text for m in seen[1:])  # summarized away
    assert seen[-1].text == "the newest request"
    events = state["engram_compaction"]
    assert events[-1]["tier"] == "summarize" and events[-1]["status"] == "committed"
    assert events[-1]["source"] == "extractive"  # no model given for summaries
    assert state["engram_budget"]["estimate"] < events[-1]["tokens_before"]


def test_large_tool_outputs_are_spilled_on_the_way_back(project):
    @tool
    def dump_log() -> str:
        """Return the whole build log."""
        return "log line\n" * 5_000

    model = model_saying(
        AIMessage("", tool_calls=[{"name": "dump_log", "id": "call_1", "args": {}}]),
        AIMessage("done"),
    )
    agent = create_agent(
        model,
        tools=[dump_log],
        middleware=[BudgetMiddleware(context_window=WINDOW, project=project)],
    )
    state = run(agent, [HumanMessage("why did the build fail?")])
    message = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    saved = [p for p in state_of(project).path(SPILL_FOLDER).rglob("*") if p.is_file()]
    assert len(saved) == 1 and saved[0].read_text().count("log line") == 5_000
    assert SPILL_DIR.as_posix() in message.text and len(message.text) < 10_000


def test_engram_tools_in_create_agent_return_wrapped_results_and_errors(project):
    model = model_saying(
        AIMessage(
            "",
            tool_calls=[
                {"name": "read_file", "id": "call_ok", "args": {"path": "cart.py"}},
                {"name": "read_file", "id": "call_bad", "args": {"path": "../secret"}},
            ],
        ),
        AIMessage("done"),
    )
    agent = create_agent(model, tools=engram_tools(project))
    state = run(agent, [HumanMessage("read the cart")])
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert results["call_ok"].status == "success" and "def cart_total" in results["call_ok"].text
    assert results["call_bad"].status == "error" and "refused" in results["call_bad"].text
    assert all('trust="untrusted-data"' in m.text for m in results.values())
    assert state["messages"][-1].content == "done"


def test_the_state_schema_declares_engram_fields():
    assert {"engram_budget", "engram_compaction"} <= set(EngramAgentState.__annotations__)
