"""The shell: the ``engram`` command line, the chat REPL, the turn runner and the MCP server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.cli._app import app
    from engram.cli._entry import main

__all__ = [
    "app",
    "main",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.cli._app": ("app",),
        "engram.cli._entry": ("main",),
    },
)
