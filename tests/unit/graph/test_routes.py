from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    Context,
    State,
    route_after_call_model,
    route_after_check_budget,
    route_after_confirm_task,
    route_after_pack_context,
    route_after_retrieve_memory,
)

AGENT = Runtime(context=Context(model="m"))
CONTEXT_MODE = Runtime(context=Context(model="m", mode="context"))
NO_MODEL = Runtime(context=Context())


def test_high_risk_waits_for_confirmation_only_when_an_agent_will_act():
    high = State(task_profile={"risk": "high"})
    assert route_after_retrieve_memory(high, AGENT) == "confirm_task"
    assert route_after_retrieve_memory(high, CONTEXT_MODE) == "retrieve"
    assert route_after_retrieve_memory(high, NO_MODEL) == "retrieve"
    approved = State(task_profile={"risk": "high"}, approval={"approved": True})
    assert route_after_retrieve_memory(approved, AGENT) == "retrieve"
    assert route_after_retrieve_memory(State(task_profile={"risk": "low"}), AGENT) == "retrieve"


def test_rejection_ends_the_turn():
    assert route_after_confirm_task(State(approval={"approved": True})) == "retrieve"
    assert route_after_confirm_task(State(approval={"approved": False})) == "__end__"


def test_pack_is_the_result_without_an_agent():
    assert route_after_pack_context(State(), AGENT) == "check_budget"
    assert route_after_pack_context(State(), CONTEXT_MODE) == "__end__"
    assert route_after_pack_context(State(), NO_MODEL) == "__end__"


def test_budget_route():
    assert route_after_check_budget(State(budget={"decision": "summarize"})) == "compact_history"
    assert route_after_check_budget(State(budget={"decision": "clear"})) == "call_model"


def test_call_model_route():
    calls = AIMessage(content="", tool_calls=[{"name": "grep_code", "args": {}, "id": "c"}])
    assert route_after_call_model(State(messages=[HumanMessage("q"), calls])) == "run_tools"
    assert (
        route_after_call_model(State(messages=[HumanMessage("q"), AIMessage("a")]))
        == "learn_from_task"
    )
    with pytest.raises(ValueError):
        route_after_call_model(State())


def test_refused_settings_end_the_turn_after_load_rules():
    from engram.graph import route_after_load_rules

    assert route_after_load_rules(State(error="the project folder does not exist")) == "__end__"
    assert route_after_load_rules(State()) == "retrieve_memory"
