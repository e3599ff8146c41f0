"""The model's tools: read, glob and grep the project, search code, query the graph, save memory."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "build_tools": "engram.graph.tools.available_tools",
    "wrap_tool_result": "engram.graph.tools.project_tools",
}

__all__ = [
    "build_tools",
    "wrap_tool_result",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
