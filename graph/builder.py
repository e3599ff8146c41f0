"""Wire engram's nodes into a LangGraph ``StateGraph``; the only module that imports nodes.

::

    START → load_rules → retrieve_memory ─(high risk)→ confirm_task ─(rejected)→ END
                                 └──────────────┬───────────┘
                            search_exact ∥ search_semantic   (per-branch timeout)
                                        → expand_relations → pack_context ─(context mode)→ END
    pack_context → check_budget ─(summarize)→ compact_history → call_model
    check_budget → call_model ─(tool calls)→ run_tools → check_budget
    call_model ─(final answer after edits)→ verify_changes ─(failed, rounds left)→ check_budget
    call_model / verify_changes ─(done)→ learn_from_task → record_feedback → END
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.node_entry import node_entry
from engram.graph.retrieval.branch_timeout import wire_retrieval
from engram.graph.routes import (
    route_after_call_model,
    route_after_check_budget,
    route_after_confirm_task,
    route_after_pack_context,
    route_after_retrieve_memory,
    route_after_verify_changes,
)
from engram.graph.state import InputState, State
from engram.nodes.call_model import call_model
from engram.nodes.check_budget import check_budget
from engram.nodes.compact_history import compact_history
from engram.nodes.confirm_task import confirm_task
from engram.nodes.expand_relations import expand_relations
from engram.nodes.learn_from_task import learn_from_task
from engram.nodes.load_rules import load_rules
from engram.nodes.pack_context import pack_context
from engram.nodes.record_feedback import record_feedback
from engram.nodes.retrieve_memory import retrieve_memory
from engram.nodes.review_actions import review_actions
from engram.nodes.run_tools import run_tools
from engram.nodes.search_exact import search_exact
from engram.nodes.search_semantic import search_semantic
from engram.nodes.verify_changes import verify_changes

__all__ = ["build_graph", "builder"]

Node = Callable[..., Any]


def off_loop(node: Node) -> Node:
    """Run a node in a worker thread with its own event loop.

    Stores (SQLite, Chroma), tree-sitter and file I/O block; the LangGraph server refuses
    blocking calls on its event loop, and a blocked loop stalls parallel branches. The worker
    runs in a copy of the caller's context variables, so LangGraph's config, interrupts and
    stream writer keep working.
    """

    async def run(state: State, runtime: Runtime[Context], **bound: Any) -> Any:
        return await asyncio.to_thread(lambda: asyncio.run(node(state, runtime, **bound)))

    run.__name__ = run.__qualname__ = node.__name__
    run.__doc__ = node.__doc__
    return run


def _add(
    graph: StateGraph[Any, Any, Any, Any], node: Node, deps: Deps, *, thread: bool = True
) -> None:
    """Add a node under its function name with the live handles bound (sync and async)."""
    on_loop = off_loop(node) if thread else None
    graph.add_node(node.__name__, node_entry(node, deps, on_loop=on_loop))


def builder(deps: Deps) -> StateGraph[State, Context, InputState, State]:
    """Return the uncompiled engram graph with every node bound to ``deps``."""
    graph = StateGraph(State, context_schema=Context, input_schema=InputState)
    for node in (load_rules, retrieve_memory, confirm_task, check_budget, compact_history,
                 review_actions, run_tools, verify_changes, learn_from_task, record_feedback):
        _add(graph, node, deps)
    # The model call streams tokens through LangGraph callbacks: it stays on the main loop
    # (its I/O is async; its ledger write is already off-loop).
    _add(graph, call_model, deps, thread=False)
    graph.add_node("retrieve", _retrieve_gate)
    wire_retrieval(
        graph, deps, sources=["retrieve"], search_exact=search_exact,
        search_semantic=search_semantic, expand_relations=expand_relations,
        pack_context=pack_context,
    )
    graph.add_edge(START, "load_rules")
    graph.add_edge("load_rules", "retrieve_memory")
    graph.add_conditional_edges("retrieve_memory", route_after_retrieve_memory,
                                ["confirm_task", "retrieve"])
    graph.add_conditional_edges("confirm_task", route_after_confirm_task, ["retrieve", END])
    graph.add_conditional_edges("pack_context", route_after_pack_context, ["check_budget", END])
    graph.add_conditional_edges("check_budget", route_after_check_budget,
                                ["compact_history", "call_model"])
    graph.add_edge("compact_history", "call_model")
    graph.add_conditional_edges("call_model", route_after_call_model,
                                ["review_actions", "run_tools", "verify_changes",
                                 "learn_from_task"])
    graph.add_conditional_edges("verify_changes", route_after_verify_changes,
                                ["check_budget", "learn_from_task"])
    graph.add_edge("review_actions", "run_tools")
    graph.add_edge("run_tools", "check_budget")
    graph.add_edge("learn_from_task", "record_feedback")
    graph.add_edge("record_feedback", END)
    return graph


def _retrieve_gate(state: State) -> dict[str, Any]:
    """Join point before the parallel retrieval branches (no state change)."""
    return {}


def build_graph(
    deps: Deps,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
) -> Any:
    """Compile the engram graph; without a checkpointer or store the server injects its own."""
    return builder(deps).compile(checkpointer=checkpointer, store=store, name="engram")
