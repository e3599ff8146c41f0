"""The graph core: state, settings, dependencies, budgets, pack, profile, compaction, tools."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "Context": "engram.graph.context",
    "Deps": "engram.graph.deps",
    "make_default_deps": "engram.graph.deps",
    "State": "engram.graph.state",
    "InputState": "engram.graph.state",
    "EngramError": "engram.graph.errors",
    "ConfigError": "engram.graph.errors",
    "build_graph": "engram.builder",
}

__all__ = [
    "ConfigError",
    "Context",
    "Deps",
    "EngramError",
    "InputState",
    "State",
    "build_graph",
    "make_default_deps",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
