"""Fact ranking: tokenization (English stems, CJK), BM25 order, feedback, pairs, dense scores."""

from __future__ import annotations

import numpy as np
import pytest

from engram.stores.memory._search import DEFAULT_SETTINGS, FactIndex, RankSettings, fact_tokens


def test_tokenize_stems_english_and_drops_stopwords():
    assert fact_tokens("The kids were painting sunsets") == ["kid", "paint", "sunset"]


def test_tokenize_cjk_characters_and_pairs():
    assert fact_tokens("用中文") == ["用", "中", "文", "用中", "中文"]
    assert fact_tokens("Python 3.11 项目") == ["python", "3.11", "项", "目", "项目"]


def test_lexical_ranking_and_no_match():
    index = FactIndex(["Deploys use Helm charts", "Tests run with pytest", "用户偏好中文回复"])
    assert [row for row, _ in index.search("how are tests run", 3)] == [1]
    assert [row for row, _ in index.search("中文", 3)] == [2]
    assert index.search("kubernetes", 3) == []
    assert index.search("", 3) == []
    assert FactIndex([]).search("anything", 3) == []


def test_lexical_scores_are_one_per_row():
    index = FactIndex(["alpha beta", "gamma", "alpha"], settings=RankSettings(context_weight=0))
    scores = index.lexical_scores("alpha")
    assert scores.shape == (3,)
    assert scores[1] == 0 and scores[0] > 0 and scores[2] > scores[0]


CONTEXT_TEXTS = [
    "Melanie: I finally finished the pottery class project",  # 0: strong match
    "Caroline: what did you make there?",
    "Melanie: a bowl, glazed blue, for my kitchen",  # 2: weak match, next to the strong one
    "Caroline: the weather is nice",
    "Caroline: my kitchen",  # 4: a shorter, so lexically stronger, match far away
    "Melanie: see you at the gym",
]


def test_context_lifts_a_match_recorded_next_to_a_strong_one():
    query = "pottery class kitchen"
    plain = FactIndex(CONTEXT_TEXTS, settings=RankSettings(context_weight=0))
    with_context = FactIndex(CONTEXT_TEXTS)
    plain_rows = [row for row, _ in plain.search(query, 3)]
    context_rows = [row for row, _ in with_context.search(query, 3)]
    assert plain_rows == [0, 4, 2]
    assert context_rows == [0, 2, 4]


def test_context_brings_in_rows_without_query_terms_only_when_asked():
    # Small memories: context re-ranks matches; large ones: a match's neighbours are results.
    assert [row for row, _ in FactIndex(CONTEXT_TEXTS).search("pottery", 6)] == [0]
    opened = FactIndex(CONTEXT_TEXTS, context_results=True)
    assert [row for row, _ in opened.search("pottery", 6)] == [0, 1, 2]


def test_context_decays_with_distance_and_stops_at_the_window():
    texts = ["zeta", "alpha target", "zeta", "zeta", "zeta", "zeta"]
    index = FactIndex(texts, settings=RankSettings(context_window=2))
    own = FactIndex(texts, settings=RankSettings(context_weight=0)).lexical_scores("alpha")
    scores = index.lexical_scores("alpha")
    assert scores[0] == pytest.approx(0.5 * own[1])
    assert scores[2] == pytest.approx(0.5 * own[1])
    assert scores[3] == pytest.approx(0.25 * own[1])
    assert scores[4] == 0 and scores[5] == 0


def test_context_does_not_cross_sequences():
    texts = ["gamma alpha", "alpha alpha strong", "gamma"]
    query = "alpha gamma"
    same = FactIndex(texts).lexical_scores(query)
    split = FactIndex(texts, sequences=[0, 1, 1]).lexical_scores(query)
    own = FactIndex(texts, settings=RankSettings(context_weight=0)).lexical_scores(query)
    assert split[0] == pytest.approx(own[0])
    assert same[0] > own[0]
    assert split[2] > own[2]
    with pytest.raises(ValueError):
        FactIndex(texts, sequences=[0, 1])


@pytest.mark.parametrize("method", ["bm25+", "bm25l"])
def test_lower_bounded_variants_still_leave_out_rows_without_query_terms(method):
    # bm25s adds a non-occurrence score to every row for these formulas.
    index = FactIndex(["alpha one", "beta two", "gamma three"], settings=RankSettings(method))
    assert [row for row, _ in index.search("alpha", 3)] == [0]


def test_rm3_feedback_brings_in_rows_sharing_feedback_terms():
    texts = ["python uses poetry lockfile", "poetry lockfile pinned", "java gradle build"]
    plain = FactIndex(texts)
    assert [row for row, _ in plain.search("python", 3)] == [0]
    expanded = FactIndex(texts, settings=RankSettings(feedback_docs=10, feedback_terms=10))
    rows = [row for row, _ in expanded.search("python", 3)]
    assert rows[0] == 0 and 1 in rows and 2 not in rows


def test_sequential_dependence_prefers_the_query_word_order():
    texts = ["cache warm start disabled", "start the warm cache"]
    plain = FactIndex(texts)
    sdm = FactIndex(texts, settings=RankSettings(phrase_weights=(0.85, 0.10, 0.05)))
    plain_scores = plain.lexical_scores("warm start")
    sdm_scores = sdm.lexical_scores("warm start")
    # Both rows hold both words; only row 0 holds them adjacent and in order.
    assert sdm_scores[0] - sdm_scores[1] > plain_scores[0] - plain_scores[1]
    assert [row for row, _ in sdm.search("warm start", 2)][0] == 0


def test_dense_rerank_reorders_lexical_candidates():
    assert DEFAULT_SETTINGS.dense_fusion == "rerank"
    texts = ["alpha one", "alpha two", "gamma three"]
    vectors = np.eye(3, dtype=np.float32)
    index = FactIndex(texts, vectors)
    assert index.has_vectors
    lexical = [row for row, _ in index.search("alpha", 2)]
    hits = index.search("alpha", 2, query_vector=np.array([0, 1, 0], dtype=np.float32))
    # Rows 0 and 1 tie lexically; the dense score decides; row 2 has no lexical evidence.
    assert lexical == [0, 1]
    assert [row for row, _ in hits] == [1, 0]
    assert all(score >= 1 for _, score in hits)


def test_dense_rerank_keeps_lexical_order_against_a_small_dense_weight():
    texts = ["alpha alpha alpha", "alpha beta gamma delta epsilon zeta", "omega"]
    vectors = np.eye(3, dtype=np.float32)
    index = FactIndex(texts, vectors)
    hits = index.search("alpha", 2, query_vector=np.array([0, 1, 0], dtype=np.float32))
    assert [row for row, _ in hits] == [0, 1]


def test_dense_fills_up_when_too_few_rows_share_a_word():
    texts = ["alpha one", "beta two", "gamma three"]
    vectors = np.eye(3, dtype=np.float32)
    index = FactIndex(texts, vectors)
    hits = index.search("alpha", 3, query_vector=np.array([0, 0, 1], dtype=np.float32))
    assert [row for row, _ in hits] == [0, 2, 1]
    assert hits[0][1] >= 1 > hits[1][1] >= hits[2][1]
    only_dense = index.search("kubernetes", 1, query_vector=np.array([0, 1, 0], np.float32))
    assert [row for row, _ in only_dense] == [1]


def test_rank_fusion_brings_in_rows_without_shared_words():
    texts = ["alpha one", "beta two", "gamma three"]
    index = FactIndex(texts, np.eye(3, dtype=np.float32), RankSettings(dense_fusion="rrf"))
    hits = index.search("alpha", 3, query_vector=np.array([0, 0, 1], dtype=np.float32))
    # Row 0 is first lexically and last by vectors; row 2 first by vectors only.
    assert [row for row, _ in hits] == [0, 2, 1]
