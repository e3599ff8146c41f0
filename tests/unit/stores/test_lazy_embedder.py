from __future__ import annotations

import numpy as np

from engram.graph import Context
from engram.graph.retrieval import fact_embedder
from engram.stores.embeddings import LazyEmbedder
from engram.stores.embeddings._embedders import HashEmbedder


def test_model_is_built_once_and_only_when_used():
    built = []

    def factory():
        built.append(1)
        return HashEmbedder()

    lazy = LazyEmbedder(factory)
    assert not lazy.loaded and built == []
    vectors = lazy.embed(["alpha parser", "beta lexer"])
    assert vectors.shape[0] == 2 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert lazy.model_id == HashEmbedder().model_id
    assert built == [1]


def test_fact_embedder_follows_the_run_settings(tmp_path):
    assert fact_embedder(Context(embedding_provider="hash", engram_home=str(tmp_path))) is None
    lazy = fact_embedder(Context(engram_home=str(tmp_path)))
    assert isinstance(lazy, LazyEmbedder) and not lazy.loaded
