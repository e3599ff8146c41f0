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


def warm_up(app: AppCommand) -> AppCommand:
    """Import the commands' modules; return ``app``, the root Click command, to run requests.

    Typer turns the app into a Click command on every start (about 0.1 s); the server reuses
    the one that runs ``engram serve`` for every request.
    """
    import importlib

    from engram.stores._redaction import service_patterns
    from engram.stores.codeindex._chroma_import import import_chromadb

    for name in WARM_MODULES:
        importlib.import_module(name)
    import_chromadb()
    service_patterns()  # detect-secrets' plugins, which every pack's redaction reads (0.1 s)
    return app
