"""The library API: engram from Python — the graph, context packs, retrievers, tools, middleware.

Import from ``engram.api`` (the same names): see the README, "Use engram from Python".
"""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "create_graph": "engram.api.compiled_graph",
    "build_context": "engram.api.context_builder",
    "abuild_context": "engram.api.context_builder",
    "CodeRetriever": "engram.api.retrievers",
    "MemoryRetriever": "engram.api.retrievers",
    "engram_tools": "engram.api.agent_tools",
    "BudgetMiddleware": "engram.api.middleware",
    "MemoryMiddleware": "engram.api.middleware",
    "ContextPackMiddleware": "engram.api.middleware",
    "Context": "engram.graph.context",
    "Pack": "engram.graph.pack.pack_filling",
    "open_memory_store": "engram.stores.backends",
    "open_checkpointer": "engram.stores.backends",
}

__all__ = [
    "BudgetMiddleware",
    "CodeRetriever",
    "Context",
    "ContextPackMiddleware",
    "MemoryMiddleware",
    "MemoryRetriever",
    "Pack",
    "abuild_context",
    "build_context",
    "create_graph",
    "engram_tools",
    "open_checkpointer",
    "open_memory_store",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
