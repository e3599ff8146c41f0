"""The code index: tree-sitter chunks, ripgrep, BM25, vectors in Chroma, hybrid ranking."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

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
    return lazy_attribute(__name__, _WHERE, name)
