"""The library API: engram from Python — the graph, context packs, retrievers, tools, middleware.

Import from ``engram.api`` (the same names): see the README, "Use engram from Python".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.api._graph import create_graph
    from engram.api._middleware import BudgetMiddleware, ContextPackMiddleware, MemoryMiddleware
    from engram.api._pack import abuild_pack, build_pack, context_pack_value, pack_settings
    from engram.api._retrievers import CodeRetriever, MemoryRetriever
    from engram.api._tools import engram_tools

__all__ = [
    "BudgetMiddleware",
    "CodeRetriever",
    "ContextPackMiddleware",
    "MemoryMiddleware",
    "MemoryRetriever",
    "abuild_pack",
    "build_pack",
    "context_pack_value",
    "create_graph",
    "engram_tools",
    "pack_settings",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.api._graph": ("create_graph",),
        "engram.api._middleware": ("BudgetMiddleware", "ContextPackMiddleware", "MemoryMiddleware"),
        "engram.api._pack": ("abuild_pack", "build_pack", "context_pack_value", "pack_settings"),
        "engram.api._retrievers": ("CodeRetriever", "MemoryRetriever"),
        "engram.api._tools": ("engram_tools",),
    },
)
