"""The shell: the ``engram`` command line, the chat REPL, the turn runner and the MCP server."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "app": "engram.graph.cli.app",
    "main": "engram.graph.cli.app",
}

__all__ = [
    "app",
    "main",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
