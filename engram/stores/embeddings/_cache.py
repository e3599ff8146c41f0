"""Remember embeddings by (model id, text hash) so no text is embedded twice for a model."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from engram.stores.sqlite import sqlite_connect

EMBEDDING_CACHE_DB = "embeddings.sqlite"
"""File name of the cache under ENGRAM_HOME."""

SQLITE_VARIABLES = 500
"""Keys per ``IN (...)`` query, under SQLite's bound-variable limit."""


def text_hash(text: str) -> str:
    """Return the sha256 hex digest of ``text`` (UTF-8, undecodable characters replaced)."""
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


@runtime_checkable
class EmbeddingCache(Protocol):
    """Stores vectors by model id and text hash."""

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors among ``hashes`` (missing ones are absent)."""
        ...

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors by text hash (existing entries are kept)."""
        ...


class InMemoryEmbeddingCache:
    """Dictionary-backed cache for tests and one-off runs."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], np.ndarray] = {}

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors among ``hashes``."""
        return {h: self._data[(model_id, h)] for h in hashes if (model_id, h) in self._data}

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors by text hash."""
        for h, vector in vectors.items():
            self._data.setdefault((model_id, h), np.asarray(vector, dtype=np.float32))


class SqliteEmbeddingCache:
    """Cache in one SQLite file shared by every project and process of a user."""

    def __init__(self, path: Path) -> None:
        self._conn = sqlite_connect(path)
        self._lock = threading.Lock()
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, hash TEXT NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )

    @classmethod
    def in_home(cls, home: Path) -> SqliteEmbeddingCache:
        """Open the cache file under ENGRAM_HOME."""
        return cls(home / EMBEDDING_CACHE_DB)

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Return the cached vectors among ``hashes``."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for batch in _batches(list(hashes), SQLITE_VARIABLES):
                marks = ",".join("?" * len(batch))
                rows = self._conn.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                    (model_id, *batch),
                )
                for h, blob in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors by text hash in one transaction."""
        rows = [
            (model_id, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()
        ]
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO embeddings (model, hash, vector) VALUES (?, ?, ?)", rows
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()


def _batches(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class CachedEmbedder:
    """Wrap an embedder so texts already embedded by the same model come from the cache.

    ``hits`` and ``misses`` count texts served from the cache and texts actually embedded.
    """

    def __init__(self, inner: object, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id: str = inner.model_id  # type: ignore[attr-defined]
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        """Vector size of the wrapped embedder."""
        return int(self.inner.dim)  # type: ignore[attr-defined]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return vectors for ``texts``, embedding only those the cache does not hold."""
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get_many(self.model_id, list(dict.fromkeys(hashes)))
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in known:
                todo.setdefault(h, t)
        if todo:
            fresh = self.inner.embed(list(todo.values()))  # type: ignore[attr-defined]
            new = dict(zip(todo.keys(), fresh, strict=True))
            self.cache.put_many(self.model_id, new)
            known.update(new)
        self.misses += len(todo)
        self.hits += len(texts) - sum(1 for h in hashes if h in todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)
