"""Fact ranking: tokenization (English stems, CJK), BM25 order, fusion with dense scores."""

from __future__ import annotations

import numpy as np

from stores.fact_search import FactIndex, tokenize


def test_tokenize_stems_english_and_drops_stopwords():
    assert tokenize("The kids were painting sunsets") == ["kid", "paint", "sunset"]


def test_tokenize_cjk_characters_and_pairs():
    assert tokenize("用中文") == ["用", "中", "文", "用中", "中文"]
    assert tokenize("Python 3.11 项目") == ["python", "3.11", "项", "目", "项目"]


def test_lexical_ranking_and_no_match():
    index = FactIndex(["Deploys use Helm charts", "Tests run with pytest", "用户偏好中文回复"])
    assert [row for row, _ in index.search("how are tests run", 3)] == [1]
    assert [row for row, _ in index.search("中文", 3)] == [2]
    assert index.search("kubernetes", 3) == []
    assert index.search("", 3) == []
    assert FactIndex([]).search("anything", 3) == []


def test_dense_scores_bring_in_rows_without_shared_words():
    texts = ["alpha one", "beta two", "gamma three"]
    vectors = np.eye(3, dtype=np.float32)
    index = FactIndex(texts, vectors)
    assert index.has_vectors
    hits = index.search("alpha", 3, query_vector=np.array([0, 0, 1], dtype=np.float32))
    # Row 0 is first lexically and last by vectors; row 2 first by vectors only.
    assert [row for row, _ in hits] == [0, 2, 1]
