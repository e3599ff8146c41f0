"""Embedding cache contract (in-memory and SQLite) and the caching embedder."""

from __future__ import annotations

import numpy as np
import pytest

from engram.stores.embeddings._cache import (
    CachedEmbedder,
    InMemoryEmbeddingCache,
    SqliteEmbeddingCache,
    text_hash,
)
from engram.stores.embeddings._embedders import HashEmbedder


@pytest.fixture(params=["memory", "sqlite"])
def cache(request, tmp_path):
    if request.param == "memory":
        return InMemoryEmbeddingCache()
    return SqliteEmbeddingCache(tmp_path / "cache.sqlite")


def test_cache_round_trip_is_keyed_by_model(cache):
    vec = np.arange(4, dtype=np.float32)
    cache.put_many("m1", {"h1": vec})
    assert np.array_equal(cache.get_many("m1", ["h1", "h2"])["h1"], vec)
    assert cache.get_many("m1", ["h2"]) == {}
    assert cache.get_many("m2", ["h1"]) == {}


def test_cache_handles_more_keys_than_sqlite_variables(cache):
    vectors = {f"h{i}": np.full(2, i, dtype=np.float32) for i in range(1200)}
    cache.put_many("m", vectors)
    got = cache.get_many("m", list(vectors))
    assert len(got) == 1200 and got["h1199"][0] == 1199


class CountingEmbedder(HashEmbedder):
    def __init__(self):
        super().__init__(dim=32)
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def test_cached_embedder_embeds_each_text_once(cache):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    first = cached.embed(["alpha beta", "gamma", "alpha beta"])
    assert inner.calls == [["alpha beta", "gamma"]]
    assert (cached.misses, cached.hits) == (2, 0)
    second = cached.embed(["gamma", "delta"])
    assert inner.calls[-1] == ["delta"]
    assert (cached.misses, cached.hits) == (3, 1)
    assert np.allclose(first[1], second[0])
    assert np.allclose(first[0], first[2])
    assert cached.embed([]).shape == (0, 32)


def test_sqlite_cache_is_shared_between_instances(tmp_path):
    path = tmp_path / "shared.sqlite"
    CachedEmbedder(CountingEmbedder(), SqliteEmbeddingCache(path)).embed(["same text"])
    inner = CountingEmbedder()
    again = CachedEmbedder(inner, SqliteEmbeddingCache(path))
    again.embed(["same text"])
    assert inner.calls == [] and again.hits == 1


def test_text_hash_is_sha256():
    assert text_hash("a") == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
