"""Search on without a Chroma server that is down: exact and BM25 evidence are local.

A project indexed into a Chroma server (``ENGRAM_CHROMA_URL``) keeps its manifest and BM25
segments on this machine; only the vectors live on the server. When the server cannot be
reached, at open or later, the index's vector store is one that ranks nothing, and the
outage is a note (``vector_outage``) naming the server, password masked, and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engram.stores import BackendUnavailableError, mask_url_passwords

if TYPE_CHECKING:
    import numpy as np

    from engram.stores.codeindex import ProjectCodeIndex, VectorStore

OUTAGE_HINT = (
    "start the Chroma server (or unset ENGRAM_CHROMA_URL and run `engram index` for an "
    "embedded index) to get results by meaning back"
)


def _outage_note(server: str, reason: str) -> str:
    """Say that ``server`` cannot be reached, why (without repeating its name), and what to do."""
    shown = mask_url_passwords(server, [server])
    detail = mask_url_passwords(reason, [server]).removeprefix(f"cannot reach Chroma at {shown}")
    why = f" ({detail.lstrip(': ')})" if detail.strip(": ") else ""
    return (
        f"the Chroma server at {shown} cannot be reached{why}: results come from exact and "
        f"BM25 matches only; {OUTAGE_HINT}"
    )


class UnreachableVectors:
    """The vectors of a Chroma server that could not be reached: ranks nothing, writes nothing."""

    def __init__(self, server: str, reason: str) -> None:
        """Remember the server and why it could not be reached."""
        self.server = server
        self.outage = _outage_note(server, reason)

    def _refuse(self) -> BackendUnavailableError:
        return BackendUnavailableError(self.outage, hint=OUTAGE_HINT)

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Refuse: vectors cannot be stored while the server is down."""
        raise self._refuse()

    def delete(self, ids: Sequence[str]) -> None:
        """Refuse: vectors cannot be removed while the server is down."""
        raise self._refuse()

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Rank nothing (the other lists still do)."""
        return []

    def ids(self) -> set[str]:
        """Refuse: the stored ids are on the server."""
        raise self._refuse()


class ServerVectors:
    """A Chroma server's vectors whose failed query ranks nothing and leaves a note."""

    def __init__(self, vectors: VectorStore, server: str) -> None:
        """Wrap ``vectors`` (a ``VectorStore`` on the server at ``server``)."""
        self.vectors = vectors
        self.server = server
        self.outage = ""

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Insert or replace vectors on the server."""
        self.vectors.upsert(ids, vectors)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors from the server."""
        self.vectors.delete(ids)

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Return the server's nearest ids, or none (and a note) when it cannot be reached."""
        import httpx
        from chromadb.errors import ChromaError

        try:
            found = self.vectors.query(vector, k)
        except (httpx.HTTPError, ChromaError, ConnectionError, OSError) as exc:
            self.outage = _outage_note(self.server, str(exc))
            return []
        self.outage = ""
        return found

    def ids(self) -> set[str]:
        """Return every stored id."""
        return self.vectors.ids()

    def close(self) -> None:
        """Close the wrapped store's local files, if it keeps any."""
        close = getattr(self.vectors, "close", None)
        if callable(close):
            close()


def vector_outage(index: ProjectCodeIndex) -> str:
    """Return the note of an index whose Chroma server could not be reached, else ""."""
    vectors = index.vectors
    if isinstance(vectors, UnreachableVectors | ServerVectors):
        return vectors.outage
    return ""
