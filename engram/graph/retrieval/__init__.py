"""Retrieval plumbing: per-branch timeouts, preloading and opening a project's code index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph.retrieval._branch_timeout import (
        branch_limit_ms,
        call_bounded,
        record_branch_time,
        wire_retrieval,
    )
    from engram.graph.retrieval._first_use import (
        AUTO_INDEX_FILES,
        AUTO_INDEX_VARIABLE,
        BackgroundIndexing,
        FirstUse,
        auto_index_limit,
        build_failed_note,
        plan_first_use,
        shared_first_use,
        too_large_note,
    )
    from engram.graph.retrieval._index_build import IndexRun, update_indexes
    from engram.graph.retrieval._open_code_index import fact_embedder, open_project_index
    from engram.graph.retrieval._preload import preload
    from engram.graph.retrieval._vector_outage import OUTAGE_HINT, vector_outage

__all__ = [
    "AUTO_INDEX_FILES",
    "AUTO_INDEX_VARIABLE",
    "BackgroundIndexing",
    "FirstUse",
    "IndexRun",
    "OUTAGE_HINT",
    "auto_index_limit",
    "branch_limit_ms",
    "build_failed_note",
    "call_bounded",
    "fact_embedder",
    "open_project_index",
    "plan_first_use",
    "preload",
    "record_branch_time",
    "shared_first_use",
    "too_large_note",
    "update_indexes",
    "vector_outage",
    "wire_retrieval",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph.retrieval._branch_timeout": (
            "branch_limit_ms",
            "call_bounded",
            "record_branch_time",
            "wire_retrieval",
        ),
        "engram.graph.retrieval._first_use": (
            "AUTO_INDEX_FILES",
            "AUTO_INDEX_VARIABLE",
            "BackgroundIndexing",
            "FirstUse",
            "auto_index_limit",
            "build_failed_note",
            "plan_first_use",
            "shared_first_use",
            "too_large_note",
        ),
        "engram.graph.retrieval._index_build": ("IndexRun", "update_indexes"),
        "engram.graph.retrieval._open_code_index": ("fact_embedder", "open_project_index"),
        "engram.graph.retrieval._preload": ("preload",),
        "engram.graph.retrieval._vector_outage": ("OUTAGE_HINT", "vector_outage"),
    },
)
