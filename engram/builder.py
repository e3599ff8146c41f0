"""Wire engram's nodes into a LangGraph ``StateGraph``; the only module that imports nodes.

::

    START → load_rules ─(settings refused)→ END
    load_rules → retrieve_memory ─(high risk)→ confirm_task ─(rejected)→ END
                                 └──────────────┬───────────┘
                            search_exact ∥ search_semantic   (per-branch timeout)
                                        → expand_relations → pack_context ─(context mode,
                                                                             no model)→ END
    pack_context → check_budget ─(summarize)→ compact_history → call_model
    check_budget → call_model ─(tool calls)→ run_tools → check_budget
    call_model ─(final answer after edits)→ verify_changes ─(failed, rounds left)→ check_budget
    call_model / verify_changes ─(done)→ learn_from_task → record_feedback → END
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from engram.graph import (
    LAST_NODE,
    Context,
    Deps,
    InputState,
    State,
    lazy_node_entry,
    node_entry,
    route_after_call_model,
    route_after_check_budget,
    route_after_confirm_task,
    route_after_load_rules,
    route_after_pack_context,
    route_after_retrieve_memory,
    route_after_verify_changes,
)
from engram.graph.retrieval import wire_retrieval
from engram.nodes import (
    confirm_task,
    expand_relations,
    load_rules,
    pack_context,
    retrieve_memory,
    search_exact,
    search_semantic,
)

Node = Callable[..., Any]

MODEL_NODES = (
    "check_budget",
    "compact_history",
    "call_model",
    "review_actions",
    "run_tools",
    "verify_changes",
    "learn_from_task",
    "record_feedback",
)
"""Nodes only a turn with a model reaches: imported when the first of them runs, so building a
context pack never loads them (the tools, compaction, edits, snapshots)."""


@cache
def _model_nodes() -> dict[str, Node]:
    from engram.nodes import (
        call_model,
        check_budget,
        compact_history,
        learn_from_task,
        record_feedback,
        review_actions,
        run_tools,
        verify_changes,
    )

    nodes: tuple[Node, ...] = (
        check_budget,
        compact_history,
        call_model,
        review_actions,
        run_tools,
        verify_changes,
        learn_from_task,
        record_feedback,
    )
    return {node.__name__: node for node in nodes}


def _model_node(name: str) -> Node:
    return _model_nodes()[name]


def _add(graph: StateGraph[Any, Any, Any, Any], node: Node, deps: Deps) -> None:
    """Add a node under its function name with the live handles bound (sync and async).

    Nodes whose work blocks (files, SQLite, Chroma, ripgrep, tree-sitter) are plain functions,
    run in worker threads, away from the event loop (the LangGraph server refuses blocking
    calls on its loop); the async nodes send their blocking parts to ``asyncio.to_thread``.
    """
    graph.add_node(node.__name__, node_entry(node, deps))


def builder(
    deps: Deps, *, context_schema: type[Context] = Context
) -> StateGraph[State, Context, InputState, State]:
    """Return the uncompiled engram graph with every node bound to ``deps``.

    ``context_schema`` is ``Context`` or a copy with other defaults (``Context.with_defaults``).
    """
    graph = StateGraph(State, context_schema=context_schema, input_schema=InputState)
    for node in (load_rules, retrieve_memory, confirm_task):
        _add(graph, node, deps)
    for name in MODEL_NODES:
        graph.add_node(name, lazy_node_entry(partial(_model_node, name), deps, name=name))
    graph.add_node("retrieve", _retrieve_gate)
    wire_retrieval(
        graph,
        deps,
        sources=["retrieve"],
        search_exact=search_exact,
        search_semantic=search_semantic,
        expand_relations=expand_relations,
        pack_context=pack_context,
    )
    graph.add_edge(START, "load_rules")
    graph.add_conditional_edges("load_rules", route_after_load_rules, ["retrieve_memory", END])
    graph.add_conditional_edges(
        "retrieve_memory", route_after_retrieve_memory, ["confirm_task", "retrieve"]
    )
    graph.add_conditional_edges("confirm_task", route_after_confirm_task, ["retrieve", END])
    graph.add_conditional_edges("pack_context", route_after_pack_context, ["check_budget", END])
    graph.add_conditional_edges(
        "check_budget", route_after_check_budget, ["compact_history", "call_model"]
    )
    graph.add_edge("compact_history", "call_model")
    graph.add_conditional_edges(
        "call_model",
        route_after_call_model,
        ["review_actions", "run_tools", "verify_changes", "learn_from_task"],
    )
    graph.add_conditional_edges(
        "verify_changes", route_after_verify_changes, ["check_budget", "learn_from_task"]
    )
    graph.add_edge("review_actions", "run_tools")
    graph.add_edge("run_tools", "check_budget")
    graph.add_edge("learn_from_task", LAST_NODE)
    graph.add_edge(LAST_NODE, END)
    return graph


def _retrieve_gate(state: State) -> dict[str, Any]:
    """Join point before the parallel retrieval branches (no state change)."""
    return {}


def build_graph(
    deps: Deps,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    context_schema: type[Context] = Context,
) -> Any:
    """Compile the engram graph; without a checkpointer or store the server injects its own."""
    graph = builder(deps, context_schema=context_schema)
    return graph.compile(checkpointer=checkpointer, store=store, name="engram")
