"""Wire engram's nodes into a LangGraph ``StateGraph``; the only module that imports nodes."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from graph.context import Context
from graph.deps import Deps
from graph.routes import route_after_call_model
from graph.state import InputState, State
from nodes.call_model import call_model
from nodes.load_rules import load_rules
from nodes.run_tools import run_tools

__all__ = ["build_graph", "builder"]


def _add(graph: StateGraph[Any, Any, Any, Any], node: Callable[..., Any], deps: Deps) -> None:
    """Add a node under its function name with the live handles bound."""
    graph.add_node(node.__name__, partial(node, deps=deps))


def builder(deps: Deps) -> StateGraph[State, Context, InputState, State]:
    """Return the uncompiled engram graph with every node bound to ``deps``."""
    graph = StateGraph(State, context_schema=Context, input_schema=InputState)
    for node in (load_rules, call_model, run_tools):
        _add(graph, node, deps)
    graph.add_edge(START, "load_rules")
    graph.add_edge("load_rules", "call_model")
    graph.add_conditional_edges("call_model", route_after_call_model, ["run_tools", END])
    graph.add_edge("run_tools", "call_model")
    return graph


def build_graph(
    deps: Deps,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
) -> Any:
    """Compile the engram graph; without a checkpointer or store the server injects its own."""
    return builder(deps).compile(checkpointer=checkpointer, store=store, name="engram")
