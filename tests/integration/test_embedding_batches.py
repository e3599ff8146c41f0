"""Batches embedded in a worker process give the vectors and cache counts of embedding here."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from engram.stores.embeddings import embed_in_batches
from engram.stores.embeddings._batches import WORKER_MIN_TEXTS
from engram.stores.embeddings._cache import CachedEmbedder, SqliteEmbeddingCache
from engram.stores.embeddings._lazy import LazyEmbedder
from engram.stores.embeddings._static import StaticEmbedder

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2] / "engram"


def _batches() -> list[list[str]]:
    """Slices of this package's sources, with a repeated text and an empty one in each batch."""
    texts: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py"))[:40]:
        lines = path.read_text(encoding="utf-8").splitlines()
        texts += ["\n".join(lines[i : i + 25]) for i in range(0, len(lines), 25)]
    return [[*texts[i : i + 50], texts[0], ""] for i in range(0, len(texts), 50)]


def _cached(folder: Path) -> CachedEmbedder:
    return CachedEmbedder(StaticEmbedder(), SqliteEmbeddingCache(folder / "cache.sqlite"))


def test_worker_batches_match_embedding_in_this_process(tmp_path):
    batches = _batches()
    here = _cached(tmp_path / "here")
    expected = [here.embed(batch) for batch in batches]
    worker = _cached(tmp_path / "worker")
    with embed_in_batches(LazyEmbedder(lambda: worker), WORKER_MIN_TEXTS) as embed_all:
        got = []
        for vectors in embed_all(batches):
            got.append(vectors)
            assert multiprocessing.active_children(), "no worker process embeds the batches"
    assert len(got) == len(expected) > 3
    for want, vectors in zip(expected, got, strict=True):
        assert vectors.dtype == np.float32 and np.array_equal(vectors, want)
    assert (worker.hits, worker.misses) == (here.hits, here.misses)
    again = _cached(tmp_path / "worker")  # what the worker embedded is in the cache
    assert np.array_equal(again.embed(batches[1]), expected[1]) and again.misses == 0


def test_few_texts_or_another_embedder_embed_here(tmp_path):
    batches = _batches()[:2]
    table = np.random.default_rng(0).standard_normal((30_522, 8)).astype(np.float32)
    other = CachedEmbedder(StaticEmbedder(table), SqliteEmbeddingCache(tmp_path / "c.sqlite"))
    for embedder, texts in ((_cached(tmp_path), 10), (other, WORKER_MIN_TEXTS)):
        with embed_in_batches(embedder, texts) as embed_all:
            got = list(embed_all(batches))
            assert not multiprocessing.active_children()
        assert [v.shape[0] for v in got] == [len(b) for b in batches]
