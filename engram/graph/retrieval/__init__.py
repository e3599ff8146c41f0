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
    from engram.graph.retrieval._open_code_index import fact_embedder, open_project_index
    from engram.graph.retrieval._preload import preload
    from engram.graph.retrieval._vector_outage import OUTAGE_HINT, vector_outage

__all__ = [
    "OUTAGE_HINT",
    "branch_limit_ms",
    "call_bounded",
    "fact_embedder",
    "open_project_index",
    "preload",
    "record_branch_time",
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
        "engram.graph.retrieval._open_code_index": ("fact_embedder", "open_project_index"),
        "engram.graph.retrieval._preload": ("preload",),
        "engram.graph.retrieval._vector_outage": ("OUTAGE_HINT", "vector_outage"),
    },
)
