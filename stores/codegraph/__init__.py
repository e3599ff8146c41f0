"""The code graph: symbol extraction, name resolution, queries, PageRank and slices."""

from __future__ import annotations

from importlib import import_module
from typing import Any

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
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
