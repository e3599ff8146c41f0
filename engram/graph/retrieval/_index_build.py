"""Build or update a project's code index and relation index (no console: any caller's).

``engram index`` runs it with progress bars (``engram.cli._index_build``), the CLI commands
that index a project on first use run it the same way, and a graph served by LangGraph
(Studio, ``langgraph dev``, LangGraph Server) or embedded as a library runs it in the
background (``engram.graph.retrieval._first_use``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, NamedTuple

from engram.stores import StoreError

if TYPE_CHECKING:
    from engram.graph._context import Context
    from engram.stores.codeindex import (
        GcReport,
        IndexProgress,
        IndexStats,
        ProjectCodeIndex,
    )
    from engram.stores.files import WalkReport
    from engram.stores.history import History
    from engram.stores.relations import SharedFacts


class IndexRun(NamedTuple):
    """What one index run did: the JSON summary and the figures it is made of."""

    summary: dict[str, Any]
    stats: IndexStats
    collected: GcReport | None
    mined: History | None


def _no_progress(_: IndexProgress) -> None:
    return None


def update_indexes(
    context: Context,
    *,
    progress: Callable[[IndexProgress], None] = _no_progress,
    gc: bool = False,
    walk: WalkReport | None = None,
) -> IndexRun:
    """Update the project's code index and relation index from one walk of the tree.

    Args:
        context: Run settings (the project, its state folder, the embedder).
        progress: Called as each phase (parse, embed, BM25) advances.
        gc: Also collect the shared Chroma server's vectors no checkout uses.
        walk: The project walk, when the caller has just made it (else one is made).

    Raises:
        StoreError: The code index cannot be opened or written (a Chroma server down).
        OSError: The index folder cannot be written (a full disk).
    """
    from engram.graph.retrieval._open_code_index import open_project_index

    started = time.perf_counter()
    index = open_project_index(context, create=True)
    shared = _shared_facts()
    try:
        stats, walk = _update_index(index, progress, shared, walk)
        collected = index.collect_garbage() if gc else None
        mined = index.history.last if index.history is not None else None
    finally:
        index.close()
    summary: dict[str, Any] = asdict(stats)
    if collected is not None:
        summary["gc"] = asdict(collected)
    if mined is not None:
        summary["history"] = {
            "commits": len(mined.commits),
            "new_commits": mined.added,
            "seconds": round(mined.seconds, 3),
            "note": mined.note,
        }
    summary["graph"] = _update_graph(context, walk, shared)
    summary["skipped"] = _skip_summary(walk)
    summary["seconds_total"] = round(time.perf_counter() - started, 3)
    return IndexRun(summary, stats, collected, mined)


def _shared_facts() -> SharedFacts | None:
    """Return where the chunking pass keeps relation facts, or None without a relation index."""
    try:
        from engram.stores.relations import SharedFacts
    except ImportError:  # reported by the relation index update
        return None
    return SharedFacts()


def _update_index(
    index: ProjectCodeIndex,
    progress: Callable[[IndexProgress], None],
    shared: SharedFacts | None,
    walk: WalkReport | None = None,
) -> tuple[IndexStats, WalkReport]:
    """Update the index from one project walk and return the walk for the relation index.

    Each tree the chunker parses gives ``shared`` its relation facts, so the relation index
    parses only the files the chunker did not.
    """
    from engram.stores.codeindex import walk_for_index

    if walk is None:
        walk = walk_for_index(index.root, index.manifest)
    on_tree = shared.record if shared is not None else None
    return index.update(progress, walk=walk, on_tree=on_tree), walk


SKIPPED_LISTED = 200
"""Skipped files ``engram index --json`` names (all are counted)."""


def _skip_summary(walk: WalkReport) -> dict[str, Any]:
    """Count the files the walk left out by reason, and name the first SKIPPED_LISTED."""
    reasons: dict[str, int] = {}
    for _, why in walk.skipped:
        kind = why.split(":", 1)[0]
        reasons[kind] = reasons.get(kind, 0) + 1
    listed = [{"path": path, "reason": why} for path, why in walk.skipped[:SKIPPED_LISTED]]
    return {"reasons": reasons, "files": listed}


def _update_graph(context: Context, walk: WalkReport, shared: SharedFacts | None) -> dict[str, Any]:
    """Refresh the relation index alongside the index; a failure is reported, not fatal."""
    try:
        from engram.stores.relations import update_relation_index

        stats = update_relation_index(
            context.project_path, context.state, files=walk.files, shared=shared
        )
    except (ImportError, StoreError, OSError, RuntimeError, ValueError) as exc:
        return {"error": str(exc)}
    return asdict(stats) if hasattr(stats, "__dataclass_fields__") else {"stats": str(stats)}
