"""Remember embeddings by (model id, text hash) so no text is embedded twice for a model."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass
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
        self.path = path
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
        return self._finish(self._start(texts, None))

    def embed_batches(
        self, batches: Iterable[Sequence[str]], submit: Submit, *, submit_stores: bool = False
    ) -> Iterator[np.ndarray]:
        """Yield each batch's vectors as ``embed`` would, embedding misses through ``submit``.

        The next batch's misses are submitted before a batch is yielded, so they are embedded
        (by a worker process) while the caller writes the vectors it was just given.
        ``submit_stores`` says that ``submit`` also puts the vectors in this cache's file.
        """
        pending: _Pending | None = None
        for texts in batches:
            started = self._start(texts, submit, pending)
            started.stored = submit_stores
            if pending is not None:
                yield self._finish(pending)
            pending = started
        if pending is not None:
            yield self._finish(pending)

    def _start(
        self, texts: Sequence[str], submit: Submit | None, ahead: _Pending | None = None
    ) -> _Pending:
        """Look ``texts`` up and start embedding the misses (here when ``submit`` is None).

        Texts of ``ahead``, the batch still being embedded, are not embedded again: they are
        taken from it once it is finished, as the cache would give them after it.
        """
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get_many(self.model_id, list(dict.fromkeys(hashes)))
        coming = set(ahead.todo) if ahead is not None else set()
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in known and h not in coming:
                todo.setdefault(h, t)
        misses = list(todo.values())
        future: Future[np.ndarray] | None = None
        if todo and submit is not None:
            future = submit(misses)
        elif todo:
            future = Future()
            future.set_result(self.inner.embed(misses))  # type: ignore[attr-defined]
        borrowed = ahead if ahead is not None and coming & set(hashes) else None
        return _Pending(hashes, known, list(todo), misses, future, borrowed)

    def _finish(self, pending: _Pending) -> np.ndarray:
        """Store the misses' vectors in the cache and return the batch's vectors in order."""
        hashes, known = pending.hashes, pending.known
        if pending.ahead is not None:  # finished before this batch, so its vectors are known
            came = set(pending.ahead.todo)
            known.update({h: pending.ahead.known[h] for h in hashes if h in came})
            pending.ahead = None
        if pending.future is not None:
            try:
                fresh = pending.future.result()
            except BrokenExecutor:  # the worker died: embed here instead
                fresh = self.inner.embed(pending.misses)  # type: ignore[attr-defined]
                pending.stored = False
            new = dict(zip(pending.todo, fresh, strict=True))
            if not pending.stored:
                self.cache.put_many(self.model_id, new)
            known.update(new)
        todo = set(pending.todo)
        self.misses += len(todo)
        self.hits += len(hashes) - sum(1 for h in hashes if h in todo)
        if not hashes:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)


Submit = Callable[[list[str]], "Future[np.ndarray]"]
"""Start embedding texts elsewhere (a worker process) and return the vectors' future."""


@dataclass
class _Pending:
    """A batch looked up in the cache whose misses are being embedded."""

    hashes: list[str]
    known: dict[str, np.ndarray]
    todo: list[str]
    """Hashes of the misses, in the order of ``misses``."""
    misses: list[str]
    future: Future[np.ndarray] | None
    ahead: _Pending | None = None
    """The batch before, when some of this batch's misses are being embedded with it."""
    stored: bool = False
    """Whether whoever embeds the misses also puts them in the cache."""
