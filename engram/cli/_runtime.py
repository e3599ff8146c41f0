"""Composition root for CLI processes: open stores, build ``Deps`` and compile the graph."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.store.base import BaseStore

from engram.graph import Context, make_default_deps
from engram.sessions import App
from engram.stores.sqlite import database_url, open_checkpointer, open_memory_store


@contextmanager
def open_store(context: Context) -> Iterator[BaseStore]:
    """Open only the memory store (for memory commands that need no graph)."""
    with open_memory_store(context.home_path, database_url()) as store:
        yield store


@contextmanager
def open_app(context: Context) -> Iterator[App]:
    """Open the memory store and checkpointer and compile the graph over them."""
    from engram.builder import build_graph  # the compiled graph costs a second to import

    url = database_url()
    with (
        open_memory_store(context.home_path, url) as store,
        open_checkpointer(context.home_path, url) as saver,
    ):
        deps = make_default_deps(store=store)
        graph = build_graph(deps, checkpointer=saver, store=store)
        yield App(context, graph, deps, store, saver)
