"""The code index: tree-sitter chunks, ripgrep, BM25, vectors in Chroma, hybrid ranking."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "CodeHit": "engram.stores.codeindex.code_index",
    "FileHit": "engram.stores.codeindex.code_index",
    "ProjectCodeIndex": "engram.stores.codeindex.code_index",
    "open_code_index": "engram.stores.codeindex.code_index",
}

__all__ = [
    "CodeHit",
    "FileHit",
    "ProjectCodeIndex",
    "open_code_index",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
