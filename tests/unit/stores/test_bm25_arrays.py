"""The array-built BM25 model scores every term exactly as a model ``bm25s`` indexed itself."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest

from engram.stores.codeindex import LexicalIndex, code_tokens
from engram.stores.codeindex._bm25 import BM25_B, BM25_K1
from engram.stores.codeindex._bm25_arrays import build_model

PACKAGE = Path(__file__).resolve().parents[3] / "engram"


def _corpus() -> list[list[str]]:
    """One document per 12-line slice of this package's modules, plus edge cases."""
    docs: list[list[str]] = [[], ["only"], ["same", "same", "same"], []]
    for path in sorted(PACKAGE.rglob("*.py"))[:60]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for start in range(0, len(lines), 12):
            docs.append(code_tokens("\n".join(lines[start : start + 12])))
    return docs


def _reference(docs: list[list[str]]) -> bm25s.BM25:
    model = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    model.index([list(t) or [""] for t in docs], show_progress=False)
    return model


def _column(model: bm25s.BM25, term: str) -> tuple[np.ndarray, np.ndarray]:
    scores, column = model.scores, model.vocab_dict[term]
    if column + 1 >= len(scores["indptr"]):
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
    part = slice(scores["indptr"][column], scores["indptr"][column + 1])
    return scores["indices"][part], scores["data"][part]


def test_every_term_has_the_same_documents_and_scores_bit_for_bit():
    docs = _corpus()
    reference, built = _reference(docs), build_model(docs, BM25_K1, BM25_B)
    assert len(docs) > 300
    assert set(built.vocab_dict) == set(reference.vocab_dict)
    assert built.scores["num_docs"] == reference.scores["num_docs"]
    for term in reference.vocab_dict:
        want_docs, want_scores = _column(reference, term)
        got_docs, got_scores = _column(built, term)
        assert np.array_equal(got_docs, want_docs), term
        assert got_scores.dtype == want_scores.dtype
        assert np.array_equal(got_scores, want_scores), term


@pytest.mark.parametrize(
    "query", [["def", "return"], ["self", "path", "index"], ["only"], ["same", "chunk"]]
)
def test_queries_score_every_document_identically(query):
    docs = _corpus()
    reference, built = _reference(docs), build_model(docs, BM25_K1, BM25_B)
    assert np.array_equal(built.get_scores(query), reference.get_scores(query))


def test_a_saved_array_built_index_loads_and_ranks_like_the_reference(tmp_path):
    docs = _corpus()
    ids = [f"doc{i}" for i in range(len(docs))]
    LexicalIndex.build(ids, docs).save(tmp_path / "bm25", generation=3)
    loaded, generation = LexicalIndex.load(tmp_path / "bm25")
    reference = _reference(docs)
    assert generation == 3
    for query in (["lexical", "index"], ["manifest", "chunk", "tokens"], ["graph"]):
        want = reference.get_scores(query).astype(np.float32)
        assert np.array_equal(loaded.scores(query), want)
