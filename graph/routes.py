"""Routers: pure functions of state that pick the next node."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import AIMessage

from graph.state import State

__all__ = ["route_after_call_model"]


def route_after_call_model(state: State) -> Literal["run_tools", "__end__"]:
    """Run tools while the model asks for them; otherwise the turn is over."""
    if not state.messages:
        raise ValueError("call_model produced no message")
    last = state.messages[-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        return "run_tools"
    return "__end__"
