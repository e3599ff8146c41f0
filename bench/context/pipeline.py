"""The context pipeline as the benchmarks run it: the compiled builder graph, or the same nodes.

The builder's graph is used as is when it wires ``pack_context``. To force a branch to time
out, the benchmarks need the semantic branch swapped: then the pipeline is wired here from the
same nodes, START → load_rules → retrieve_memory → (search_exact ‖ search_semantic, bounded) →
expand_relations (bounded) → pack_context → END.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from engram.graph import (  # noqa: E402
    Context,  # noqa: E402
    Deps,  # noqa: E402
    InputState,
    State,
)
from engram.graph.retrieval import (  # noqa: E402
    open_project_index,  # noqa: E402
    wire_retrieval,  # noqa: E402
)
from engram.nodes import (  # noqa: E402
    load_rules,  # noqa: E402
    pack_context,  # noqa: E402
    retrieve_memory,  # noqa: E402
    search_exact,  # noqa: E402
    search_semantic,  # noqa: E402
)
from engram.stores.relations import open_relation_index  # noqa: E402


def optional_expand_relations() -> Callable[..., Any] | None:
    """Return the graph-expansion node when this checkout has it."""
    try:
        return importlib.import_module("engram.nodes._expand_relations").expand_relations  # type: ignore[no-any-return]
    except ImportError:
        return None


def make_deps(store: Any = None) -> Deps:
    """Deps with the code index and code graph openers registered."""
    return Deps(
        store=store,
        open_code_index=open_project_index,
        open_relation_index=lambda context: open_relation_index(
            context.project_path, context.state
        ),
    )


def compose(deps: Deps, *, semantic: Callable[..., Any] | None = None) -> Any:
    """Compile the context pipeline over ``deps`` (no checkpointer).

    With no replacement semantic branch this is ``engram.builder.build_graph`` when the builder
    wires ``pack_context`` (what ``engram context`` runs); otherwise the same nodes wired here.
    """
    if semantic is None:
        from engram.builder import build_graph

        built = build_graph(deps)
        if "pack_context" in built.nodes:
            return built
    graph = StateGraph(State, context_schema=Context, input_schema=InputState)
    graph.add_node("load_rules", _bind(load_rules, deps))
    graph.add_node("retrieve_memory", _bind(retrieve_memory, deps))
    graph.add_edge(START, "load_rules")
    graph.add_edge("load_rules", "retrieve_memory")
    wire_retrieval(
        graph,
        deps,
        sources=["retrieve_memory"],
        search_exact=search_exact,
        search_semantic=semantic or search_semantic,
        expand_relations=optional_expand_relations(),
        pack_context=pack_context,
    )
    graph.add_edge("pack_context", END)
    return graph.compile()


def _bind(node: Callable[..., Any], deps: Deps) -> Callable[..., Any]:
    return partial(node, deps=deps)  # sync and async nodes alike


def run_pack(graph: Any, context: Context, task: str) -> tuple[dict[str, Any], float]:
    """Run the pipeline once; return the pack and the wall time in seconds."""
    started = time.perf_counter()
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage(task)]}, context=context))
    return out["context_pack"], time.perf_counter() - started
