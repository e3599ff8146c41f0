"""Embedders (static, MiniLM, OpenAI-compatible), their cache and the static table build."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "Embedder": "engram.stores.embeddings.embedders",
    "make_embedder": "engram.stores.embeddings.embedders",
}

__all__ = [
    "Embedder",
    "make_embedder",
]

def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
