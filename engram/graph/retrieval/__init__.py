"""Retrieval plumbing: per-branch timeouts, preloading and opening a project's code index."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "call_bounded": "engram.graph.retrieval.branch_timeout",
    "preload": "engram.graph.retrieval.preload",
    "open_project_index": "engram.graph.retrieval.open_code_index",
}

__all__ = [
    "call_bounded",
    "open_project_index",
    "preload",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
