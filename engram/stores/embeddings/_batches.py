"""Embed many batches, overlapping the shipped static embedder with the caller's writes.

A full index embeds tens of thousands of chunks and writes each batch's vectors to Chroma,
whose native code holds the interpreter lock while it writes. With the shipped static table
behind the embedding cache, the misses are embedded in one spawned worker process instead,
one batch ahead, so embedding and writing proceed on two cores; the vectors are the same
(the worker runs the same ``StaticEmbedder`` over the same texts). Any other embedder, or too
few texts to pay for starting a worker, embeds here, batch after batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache, partial

import numpy as np

from engram.stores.embeddings._cache import CachedEmbedder
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
    try:
        yield partial(cached.embed_batches, submit=partial(pool.submit, _embed_in_worker))
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


def _embed_in_worker(texts: list[str]) -> np.ndarray:
    return _worker_embedder().embed(texts)
