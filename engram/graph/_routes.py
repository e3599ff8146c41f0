"""Routers: pure functions of state (and run settings) that pick the next node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from engram.graph._context import Context
from engram.graph._node_entry import context_or_env
from engram.graph._state import State
from engram.graph.profile import is_high_risk

LAST_NODE = "record_feedback"
"""The graph's last node; a state written "as" it (a repaired or rewound session) leaves no
step queued for ``sessions resume`` to run again."""


def route_after_load_rules(state: State) -> Literal["retrieve_memory", "__end__"]:
    """A turn whose settings were refused ends at once (``load_rules`` already replied)."""
    return "__end__" if state.error else "retrieve_memory"


def route_after_retrieve_memory(
    state: State, runtime: Runtime[Context]
) -> Literal["confirm_task", "retrieve"]:
    """High-risk tasks wait for a human decision (unless auto-approved) before the agent acts.

    Building a context pack acts on nothing, so context mode never asks.
    """
    context = context_or_env(runtime.context)
    if context.mode == "context" or not context.model:
        return "retrieve"
    if is_high_risk(state.task_profile) and not state.approval.get("approved"):
        return "confirm_task"
    return "retrieve"


def route_after_confirm_task(state: State) -> Literal["retrieve", "__end__"]:
    """Continue after an approval; a rejection ends the turn (the node already replied)."""
    return "retrieve" if state.approval.get("approved") else "__end__"


def route_after_pack_context(
    state: State, runtime: Runtime[Context]
) -> Literal["check_budget", "__end__"]:
    """In context mode, or with no model configured, the pack is the result."""
    context = context_or_env(runtime.context)
    if context.mode == "context" or not context.model:
        return "__end__"
    return "check_budget"


def route_after_check_budget(state: State) -> Literal["compact_history", "call_model"]:
    """Summarize (tier 3) only when the budget check decided so; otherwise call the model."""
    return "compact_history" if state.budget.get("decision") == "summarize" else "call_model"


def route_after_call_model(
    state: State,
) -> Literal["review_actions", "run_tools", "verify_changes", "learn_from_task"]:
    """Run tools while the model asks for them, edits and commands after their review.

    A final answer after edits goes to verification (until it is final), otherwise to learning.
    """
    from engram.graph.tools import action_kind  # the tools: a model's turns only

    if not state.messages:
        raise ValueError("call_model produced no message")
    last = state.messages[-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        if any(action_kind(call["name"]) is not None for call in last.tool_calls):
            return "review_actions"
        return "run_tools"
    if state.files_changed and not state.verification.get("final"):
        return "verify_changes"
    return "learn_from_task"


def route_after_verify_changes(state: State) -> Literal["check_budget", "learn_from_task"]:
    """A failure sent back to the model gives it another turn; anything final goes to learning."""
    return "learn_from_task" if state.verification.get("final") else "check_budget"
