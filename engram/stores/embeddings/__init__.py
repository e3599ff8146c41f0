"""Embedders (static, MiniLM, OpenAI-compatible), their cache and the static table build."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.embeddings._embedders import Embedder, make_embedder
    from engram.stores.embeddings._lazy import LazyEmbedder
    from engram.stores.embeddings._static import STATIC_DIM, STATIC_FOLDER

__all__ = [
    "Embedder",
    "LazyEmbedder",
    "STATIC_DIM",
    "STATIC_FOLDER",
    "make_embedder",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.embeddings._embedders": ("Embedder", "make_embedder"),
        "engram.stores.embeddings._lazy": ("LazyEmbedder",),
        "engram.stores.embeddings._static": ("STATIC_DIM", "STATIC_FOLDER"),
    },
)
