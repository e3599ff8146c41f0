"""Embed many batches, overlapping the shipped static embedder with the caller's writes.

A full index embeds tens of thousands of chunks and writes each batch's vectors to Chroma,
whose native code holds the interpreter lock while it writes. With the shipped static table
behind the embedding cache, the misses are embedded in one spawned worker process instead,
one batch ahead, so embedding and writing proceed on two cores; the vectors are the same
(the worker runs the same ``StaticEmbedder`` over the same texts) and the worker also writes
them to the embedding cache's file, which the caller only reads. Any other embedder, or too
few texts to pay for starting a worker, embeds here, batch after batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path

import numpy as np

from engram.stores.embeddings._cache import CachedEmbedder, SqliteEmbeddingCache, text_hash
from engram.stores.embeddings._embedders import Embedder
from engram.stores.embeddings._lazy import LazyEmbedder
from engram.stores.embeddings._static import StaticEmbedder

WORKER_MIN_TEXTS = 8192
"""Fewest texts worth a worker process (starting one costs about a second of CPU)."""


@contextmanager
def embed_in_batches(
    embedder: Embedder, texts: int
) -> Iterator[Callable[[Iterable[Sequence[str]]], Iterator[np.ndarray]]]:
    """Yield a function that maps batches of texts to their vectors, batch by batch.

    Args:
        embedder: The index's embedder.
        texts: How many texts will be embedded in all (decides whether a worker pays).
    """
    cached = _shipped_static_behind_cache(embedder) if texts >= WORKER_MIN_TEXTS else None
    if cached is None:
        yield partial(map, embedder.embed)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    except (OSError, RuntimeError):
        yield partial(map, embedder.embed)
        return
    cache = cached.cache
    stores = isinstance(cache, SqliteEmbeddingCache)  # then the worker writes the file too

    def submit(batch: list[str]) -> Future[np.ndarray]:
        if isinstance(cache, SqliteEmbeddingCache):
            return pool.submit(_embed_and_store, cache.path, cached.model_id, batch)
        return pool.submit(_embed, batch)

    embed_all = partial(cached.embed_batches, submit=submit, submit_stores=stores)
    try:
        yield embed_all
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _shipped_static_behind_cache(embedder: Embedder) -> CachedEmbedder | None:
    """Return the cache wrapping the shipped static embedder, or None for other embedders."""
    if isinstance(embedder, LazyEmbedder):
        embedder = embedder.real
    if isinstance(embedder, CachedEmbedder):
        inner = embedder.inner
        if isinstance(inner, StaticEmbedder) and inner.shipped:
            return embedder
    return None


@cache
def _worker_embedder() -> StaticEmbedder:
    """The worker process's embedder, loaded by its first batch."""
    return StaticEmbedder()


@cache
def _worker_cache(path: Path) -> SqliteEmbeddingCache:
    """The worker process's connection to the embedding cache file."""
    return SqliteEmbeddingCache(path)


def _embed(texts: list[str]) -> np.ndarray:
    return _worker_embedder().embed(texts)


def _embed_and_store(path: Path, model_id: str, texts: list[str]) -> np.ndarray:
    """Embed ``texts`` and put their vectors in the cache file (off the caller's process)."""
    vectors = _embed(texts)
    _worker_cache(path).put_many(
        model_id, dict(zip((text_hash(t) for t in texts), vectors, strict=True))
    )
    return vectors
