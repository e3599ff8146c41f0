"""Load what forwarded commands need before the first one arrives, and build the Click command."""

from __future__ import annotations

from engram.cli._serve_request import AppCommand

WARM_MODULES = (
    "engram.api",
    "engram.builder",
    "engram.graph.retrieval",
    "engram.stores.codeindex",
    "engram.stores.relations",
    "engram.cli._index_commands",
    "engram.cli._graph_commands",
    "engram.cli._memory_commands",
    "engram.cli._experience_commands",
    "engram.stores.codeindex._vectors",
    "watchfiles",
)
"""Modules every forwarded command imports sooner or later (LangGraph, Chroma, tree-sitter)."""


def warm_up() -> AppCommand:
    """Import the commands' modules and return the app as one Click command, built once.

    Typer turns the app into a Click command on every call (about 0.1 s); the server builds
    it once and calls it for each request.
    """
    import importlib

    import typer.main

    from engram.cli._app import _mask_log_lines, app
    from engram.stores.codeindex._chroma_import import import_chromadb

    for name in WARM_MODULES:
        importlib.import_module(name)
    import_chromadb()
    _mask_log_lines()
    return typer.main.get_command(app)
