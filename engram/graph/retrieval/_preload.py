"""Load a project's retrieval resources (code index, relation index) before timed branches run.

Composition roots call ``preload`` once per process and project: a cold first search would
otherwise spend its per-branch timeout loading BM25, the vector index, the graph and its name
tables, and time out on a large tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.graph._context import Context
from engram.graph._deps import Deps, ResourceName
from engram.stores import StoreError

if TYPE_CHECKING:
    from engram.stores.codeindex import SearchMode

PRELOADED: tuple[ResourceName, ...] = ("code_index", "relation_index")
"""Resources opened before the graph runs."""
PRELOAD_MODES: tuple[SearchMode, ...] = ("bm25", "dense")
"""Index rankings queried once so their data is in memory."""
PRELOAD_QUERY = "load"
"""Query of the loading searches (its results are discarded)."""


def preload(deps: Deps, context: Context) -> list[str]:
    """Open the code index and graph and load them into memory before the timed branches.

    Failures are left for the branches to report; the returned notes say what could not be
    loaded.
    """
    return [note for name in PRELOADED if (note := _load(deps, context, name))]


def _load(deps: Deps, context: Context, name: ResourceName) -> str:
    try:
        if name == "code_index":
            index = deps.code_index(context)
            if index is not None and index.is_built():
                for mode in PRELOAD_MODES:
                    index.search(PRELOAD_QUERY, mode=mode, k=1)
                index.file_table()  # the localizer's file and definition table
        elif name == "relation_index":
            graph = deps.relation_index(context)
            if graph is not None:
                graph.warm()  # name tables and relation graph, built on first use
    except (StoreError, OSError) as exc:
        return f"{name}: {exc}"
    return ""
