"""The code graph: symbol extraction, name resolution, queries, PageRank and slices."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "CodeGraph": "engram.stores.codegraph.code_graph",
    "open_code_graph": "engram.stores.codegraph.code_graph",
}

__all__ = [
    "CodeGraph",
    "open_code_graph",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
