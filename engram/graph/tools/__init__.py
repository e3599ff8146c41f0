"""The model's tools: read, search and change the project, run commands, save memory."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

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
    return lazy_attribute(__name__, _WHERE, name)
