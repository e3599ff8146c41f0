"""Fact vectors for dense re-ranking, cached in the memory store so each text is embedded once.

Vectors are keyed by embedding model and text hash in ``("facts_vectors", <model label>)``,
so a change of model never mixes vectors and an edited fact is re-embedded.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from engram.stores.project import namespace_label

EMBED_BATCH = 64
LOOKUP_BATCH = 500
"""Vector lookups per store round trip (SQLite caps the parameters of one statement)."""
VECTOR_ROOT = "facts_vectors"


class TextEmbedder(Protocol):
    """The slice of an embedder facts need (``embeddings.embedders.Embedder`` fits)."""

    @property
    def model_id(self) -> str:
        """Identify the model, so cached vectors of another model are never mixed in."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one L2-normalized float32 row per text."""
        ...


def load_vectors(store: BaseStore, embedder: TextEmbedder, texts: Sequence[str]) -> np.ndarray:
    """Return one vector per text, embedding (and caching in ``store``) only unseen texts."""
    namespace = (VECTOR_ROOT, namespace_label(embedder.model_id))
    keys = [hashlib.sha256(t.encode()).hexdigest()[:32] for t in texts]
    unique = list(dict.fromkeys(keys))
    results = []
    for start in range(0, len(unique), LOOKUP_BATCH):
        results += store.batch([GetOp(namespace, k) for k in unique[start : start + LOOKUP_BATCH]])
    found: dict[str, np.ndarray] = {}
    for key, item in zip(unique, results, strict=True):
        if isinstance(item, Item) and isinstance(item.value.get("vector"), str):
            found[key] = np.frombuffer(base64.b64decode(item.value["vector"]), dtype=np.float32)
    missing = [
        (key, text) for key, text in dict(zip(keys, texts, strict=True)).items() if key not in found
    ]
    for start in range(0, len(missing), EMBED_BATCH):
        chunk = missing[start : start + EMBED_BATCH]
        rows = np.asarray(embedder.embed([text for _, text in chunk]), dtype=np.float32)
        ops = []
        for (key, _), row in zip(chunk, rows, strict=True):
            found[key] = row
            encoded = base64.b64encode(row.tobytes()).decode()
            ops.append(PutOp(namespace, key, {"vector": encoded}, index=False))
        store.batch(ops)
    return np.vstack([found[key] for key in keys]) if keys else np.zeros((0, 1), np.float32)
