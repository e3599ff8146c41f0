"""Embedders (static, MiniLM, OpenAI-compatible), their cache and the static table build."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

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
    return lazy_attribute(__name__, _WHERE, name)
