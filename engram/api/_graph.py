"""The compiled engram graph for a host app: ``invoke`` and ``ainvoke``, settings optional."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from engram.builder import build_graph
from engram.graph import Deps, make_default_deps


def create_graph(
    *,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    deps: Deps | None = None,
) -> Any:
    """Compile engram's graph with its live handles, ready to embed or call.

    Call it with ``graph.invoke(...)`` or ``await graph.ainvoke(...)``, alone or as a node or
    subgraph of your own graph. Run settings go in ``context=Context(...)``; a run without
    them (or a parent graph whose context is of another type) reads the ``ENGRAM_*``
    environment, with engram's defaults for what it does not set.

    Args:
        store: Memory store (facts, experience); also given to the graph as its store.
        checkpointer: Saves sessions, so a ``thread_id`` can be resumed, replayed or forked.
        deps: Live handles to use instead of the defaults (model factory, index openers).
    """
    return build_graph(
        deps or make_default_deps(store=store), checkpointer=checkpointer, store=store
    )
