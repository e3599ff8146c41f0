"""engram: a LangGraph coding-agent workflow with budgeted code context and long-term memory.

Import what you need from the sub-packages (``engram.graph``, ``engram.stores``); this top level
names the few things most embedders want. Nothing here is imported until it is used.
"""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

__version__ = "0.1.0"
"""engram's version; ``pyproject.toml`` names the same (a unit test holds them equal)."""

_WHERE = {
    "Context": "engram.graph.context",
    "Deps": "engram.graph.deps",
    "State": "engram.graph.state",
    "build_graph": "engram.builder",
    "make_default_deps": "engram.graph.deps",
}

__all__ = ["Context", "Deps", "State", "build_graph", "make_default_deps"]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so ``import engram`` stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
