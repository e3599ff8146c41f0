"""The shell: the ``engram`` command line, the chat REPL, the turn runner and the MCP server."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "app": "engram.cli.app",
    "main": "engram.cli.entry",
}

__all__ = [
    "app",
    "main",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
