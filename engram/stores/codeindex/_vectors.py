"""Vector storage for chunk embeddings: Chroma (embedded or server) and an in-memory twin."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engram.stores._errors import BackendUnavailableError, IndexCorruptError
from engram.stores._url_masking import mask_url_passwords
from engram.stores.codeindex._chroma_import import import_chromadb
from engram.stores.codeindex._shared_vectors import SharedChromaVectors

SHARED_USES_FILE = "shared-vectors.sqlite"
"""In the index folder: which shared vector each chunk of this checkout uses."""
CHROMA_BATCH = 2000
"""Ids per Chroma write; under the server's maximum batch size."""


@runtime_checkable
class VectorStore(Protocol):
    """Unit vectors by id with nearest-neighbour search (cosine)."""

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Insert or replace vectors."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors (unknown ids are ignored)."""
        ...

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return up to ``k`` (id, cosine similarity) pairs, most similar first."""
        ...

    def ids(self) -> set[str]:
        """Return every stored id."""
        ...


class InMemoryVectors:
    """Brute-force vector store for tests and small projects."""

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Insert or replace vectors."""
        for i, vector in zip(ids, vectors, strict=True):
            self._vectors[i] = np.asarray(vector, dtype=np.float32)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors."""
        for i in ids:
            self._vectors.pop(i, None)

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return the ``k`` most similar ids by dot product of unit vectors."""
        if not self._vectors or k <= 0:
            return []
        keys = list(self._vectors)
        sims = np.stack([self._vectors[i] for i in keys]) @ np.asarray(vector, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[:k]
        return [(keys[i], float(sims[i])) for i in order]

    def ids(self) -> set[str]:
        """Return every stored id."""
        return set(self._vectors)


def collection_name(model_id: str) -> str:
    """Name the Chroma collection of one embedding model (dimensions differ per model)."""
    return "chunks_" + hashlib.sha1(model_id.encode("utf-8")).hexdigest()[:16]


def _chroma_embedding_function() -> Any:
    """Return an embedding function that refuses to embed: we always pass vectors ourselves.

    Handing Chroma an explicit function keeps it from loading (and downloading) its own
    default model.
    """
    import_chromadb()
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class _ProvidedVectorsOnly(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            raise BackendUnavailableError("engram passes embeddings explicitly")

        @staticmethod
        def name() -> str:
            return "engram-provided"

        def get_config(self) -> dict[str, Any]:
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> _ProvidedVectorsOnly:
            return _ProvidedVectorsOnly()

    return _ProvidedVectorsOnly()


class ChromaVectors:
    """A Chroma collection holding chunk vectors (documents live in the manifest)."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Insert or replace vectors in batches."""
        for start in range(0, len(ids), CHROMA_BATCH):
            self._collection.upsert(
                ids=list(ids[start : start + CHROMA_BATCH]),
                embeddings=np.asarray(vectors[start : start + CHROMA_BATCH], dtype=np.float32),
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors in batches."""
        for start in range(0, len(ids), CHROMA_BATCH):
            self._collection.delete(ids=list(ids[start : start + CHROMA_BATCH]))

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return the ``k`` nearest ids with cosine similarity.

        No ``count()`` first: Chroma answers an empty collection, or ``k`` beyond its size,
        with what it holds, and a count costs a round trip (4 ms embedded) per query.
        """
        if k <= 0:
            return []
        found = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=k,
            include=["distances"],
        )
        ids = found["ids"][0]
        distances = found["distances"][0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def ids(self) -> set[str]:
        """Return every stored id."""
        return set(self._collection.get(include=[])["ids"])


def release_embedded_chroma() -> None:
    """Forget the embedded Chroma clients of this process (before their files are deleted)."""
    import_chromadb()
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def open_chroma_vectors(
    index_dir: Path,
    model_id: str,
    chroma_url: str = "",
    *,
    project_id: str = "",
    checkout: str = "",
) -> ChromaVectors | SharedChromaVectors:
    """Open (creating if needed) the collection for ``model_id``.

    Embedded ``PersistentClient`` under ``index_dir/chroma`` by default, this checkout's own.
    With ``chroma_url``, an ``HttpClient`` and one shared, content-addressed collection per
    project identity and model (``engram.stores.codeindex._shared_vectors``), with this
    checkout's list of the vectors it uses in ``index_dir``.

    Args:
        index_dir: The checkout's index folder.
        model_id: The embedding model (one collection per model: dimensions differ).
        chroma_url: A Chroma server's URL; "" for embedded Chroma.
        project_id: The project's identity (every clone's the same); names the shared
            collection.
        checkout: This checkout's lease id on the server.

    Raises:
        BackendUnavailableError: The Chroma server cannot be reached.
        IndexCorruptError: The embedded Chroma files cannot be opened.
    """
    chromadb = import_chromadb()
    from chromadb.config import Settings
    from chromadb.errors import ChromaError

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    name = collection_name(model_id)
    try:
        if chroma_url:
            from urllib.parse import urlparse

            parsed = urlparse(chroma_url)
            client: Any = chromadb.HttpClient(
                host=parsed.hostname or "localhost",
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=settings,
            )
            project_tag = hashlib.sha1((project_id or str(index_dir)).encode()).hexdigest()[:12]
            name = f"{name}_{project_tag}"
        else:
            client = chromadb.PersistentClient(path=str(index_dir / "chroma"), settings=settings)
    except (ValueError, ConnectionError, OSError, ChromaError) as exc:
        release_embedded_chroma()  # or a retry would get the broken client back
        if chroma_url:
            shown = mask_url_passwords(chroma_url, [chroma_url])
            raise BackendUnavailableError(
                f"cannot reach Chroma at {shown}: {mask_url_passwords(str(exc), [chroma_url])}",
                hint="start the Chroma server or unset ENGRAM_CHROMA_URL",
            ) from exc
        raise IndexCorruptError(f"cannot open the Chroma index: {exc}") from exc
    try:
        collection = client.get_or_create_collection(
            name,
            embedding_function=_chroma_embedding_function(),
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"model_id": model_id},
        )
        leases = (
            client.get_or_create_collection(
                f"{name}_leases",
                embedding_function=_chroma_embedding_function(),
                metadata={"model_id": model_id, "holds": "engram checkout leases"},
            )
            if chroma_url
            else None
        )
    except Exception as exc:  # chromadb raises its own untyped errors for dead servers
        raise BackendUnavailableError(
            f"Chroma collection unavailable: {exc}",
            hint=(
                "check ENGRAM_CHROMA_URL; with embedded Chroma, delete the index folder "
                "`engram doctor` names and run `engram index`"
            ),
        ) from exc
    if leases is not None:
        return SharedChromaVectors(
            collection, leases, index_dir / SHARED_USES_FILE, model_id, checkout
        )
    return ChromaVectors(collection)
