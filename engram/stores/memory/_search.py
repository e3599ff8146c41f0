"""Rank facts for a query: BM25 (bm25s) over fact text, with recording context and dense re-ranking.

Facts are rarely said alone: a fact recorded right before or after a matching one (the next
turn of a conversation, the other facts saved from one task) is often the one that answers.
Each fact therefore also scores a share of its neighbours' lexical scores in recorded order
(``RankSettings.context_weight``, ``context_window``), within one sequence only (global and
project facts are separate sequences). In a small memory context only re-ranks the facts that
share a word with the query; in a large one (``context_results``) a neighbour of a match can
be a result itself, as a dense-similar fact can.

Dense scores join only when vectors are supplied (the facts store does so once the visible
set is large): they re-rank the lexical top 50 with a small interpolation weight and fill up
the results when too few facts share a word with the query. Reciprocal rank fusion, RM3
feedback, BM25+ and sequential-dependence pairs stay selectable through ``RankSettings``;
they did not improve recall in measurement (bench/RESULTS.md, "Facts memory"). Fact vectors
come from ``engram.stores.memory._vectors``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

FACT_RRF_K = 60
"""Reciprocal-rank-fusion constant (the usual 60)."""
FUSION_DEPTH = 100
"""How many of each ranking's best rows take part in the fusion."""

_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+(?:[.,:]\d+)*", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def new_stemmer() -> Stemmer.Stemmer:
    """Return an English Snowball stemmer (each index keeps its own, with its word cache)."""
    return Stemmer.Stemmer("english")


def fact_tokens(text: str, stemmer: Stemmer.Stemmer | None = None) -> list[str]:
    """Split text into BM25 terms: stemmed English words minus stopwords, CJK chars and pairs."""
    stemmer = stemmer or new_stemmer()
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    position = 0
    for run in _CJK.finditer(folded):
        tokens += _words(folded[position : run.start()], stemmer)
        chars = run.group()
        tokens += list(chars)
        tokens += [chars[i : i + 2] for i in range(len(chars) - 1)]
        position = run.end()
    tokens += _words(folded[position:], stemmer)
    return tokens


def _words(text: str, stemmer: Stemmer.Stemmer) -> list[str]:
    words = [w.replace("’", "'") for w in _WORD.findall(text) if w not in _STOPWORDS]
    return list(stemmer.stemWords(words)) if words else []


@dataclass(frozen=True)
class RankSettings:
    """How a ``FactIndex`` scores; every number is a textbook default, fixed in advance.

    Attributes:
        method: bm25s term-frequency formula ("lucene", "bm25+", "bm25l", ...).
        delta: Lower bound of the BM25+ / BM25L term-frequency part (Lv & Zhai 2011 use 1.0).
        feedback_docs: RM3 pseudo-relevance feedback documents (0 turns feedback off).
        feedback_terms: RM3 expansion terms kept from the feedback model.
        original_weight: Weight of the original query in the RM3 mixture.
        phrase_weights: Sequential-dependence weights (term, ordered pair, unordered pair)
            as in Metzler & Croft 2005 (0.85, 0.10, 0.05); ``None`` turns them off.
        window: Unordered-pair window of the sequential-dependence model.
        dense_fusion: "rrf" (reciprocal rank fusion) or "rerank" (interpolate within the
            lexical top ``rerank_depth``).
        rerank_depth: Lexical candidates re-ranked by dense similarity.
        dense_weight: Weight of the min-max-normalized dense score when re-ranking.
        context_weight: Share of a neighbour's lexical score a fact gains; the neighbour
            ``d`` places away counts ``context_weight / d`` (0 turns context off).
        context_window: How many places before and after a fact count as its context.
    """

    method: str = "lucene"
    delta: float = 1.0
    feedback_docs: int = 0
    feedback_terms: int = 10
    original_weight: float = 0.5
    phrase_weights: tuple[float, float, float] | None = None
    window: int = 8
    dense_fusion: str = "rerank"
    rerank_depth: int = 50
    dense_weight: float = 0.2
    context_weight: float = 0.5
    context_window: int = 2


DEFAULT_SETTINGS = RankSettings()


class _Bm25:
    """One bm25s index over token lists, scoring weighted queries term by term."""

    def __init__(self, corpus: list[list[str]], settings: RankSettings) -> None:
        self._size = len(corpus)
        self._bm25 = bm25s.BM25(method=settings.method, delta=settings.delta)
        self._empty = not any(corpus)
        if not self._empty:
            self._bm25.index(corpus, show_progress=False)

    def scores(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """Return (score per row, whether the row holds any weighted term)."""
        total = np.zeros(self._size, dtype=np.float32)
        matched = np.zeros(self._size, dtype=bool)
        if self._empty:
            return total, matched
        vocab = self._bm25.vocab_dict
        indices, indptr = self._bm25.scores["indices"], self._bm25.scores["indptr"]
        for term, weight in weights.items():
            token = vocab.get(term)
            if token is None or weight == 0:
                continue
            total += weight * np.asarray(self._bm25.get_scores_from_ids([token]), np.float32)
            matched[indices[indptr[token] : indptr[token + 1]]] = True
        return total, matched


class FactIndex:
    """An immutable ranking index over a list of fact texts in recorded order.

    ``sequences`` labels each row's sequence (rows of one label must be contiguous and in
    recorded order); context flows only between neighbouring rows of the same label. By
    default all rows form one sequence. With ``context_results`` a row that shares no term
    with the query can still be a result through its neighbours' match; without it (small
    memories, where every match is returned anyway) context only re-ranks matching rows.
    """

    def __init__(
        self,
        texts: Sequence[str],
        vectors: np.ndarray | None = None,
        settings: RankSettings = DEFAULT_SETTINGS,
        sequences: Sequence[int] | None = None,
        *,
        context_results: bool = False,
    ) -> None:
        self._size = len(texts)
        self._context_results = context_results
        self._settings = settings
        if sequences is not None and len(sequences) != len(texts):
            raise ValueError("one sequence label per text is needed")
        labels = np.zeros(len(texts), np.int64) if sequences is None else np.asarray(sequences)
        # together[d - 1][i]: rows i and i + d belong to the same sequence.
        self._together = [labels[d:] == labels[:-d] for d in range(1, settings.context_window + 1)]
        self._stemmer = new_stemmer()
        self._corpus = [fact_tokens(t, self._stemmer) for t in texts]
        self._terms = _Bm25(self._corpus, settings)
        self._ordered: _Bm25 | None = None
        self._unordered: _Bm25 | None = None
        if settings.phrase_weights is not None:
            self._ordered = _Bm25([_ordered_pairs(d) for d in self._corpus], settings)
            self._unordered = _Bm25(
                [_unordered_pairs(d, settings.window) for d in self._corpus], settings
            )
        self._vectors = vectors

    @property
    def has_vectors(self) -> bool:
        """Whether dense similarity takes part in ranking."""
        return self._vectors is not None and len(self._vectors) > 0

    def search(
        self, query: str, k: int, query_vector: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Return up to ``k`` (row, score) pairs, best first; rows with no evidence are left out."""
        if self._size == 0 or k <= 0:
            return []
        lexical, matched = self._lexical(query)
        if query_vector is None or self._vectors is None:
            return _top(lexical, k, keep=matched)
        query_vector = np.asarray(query_vector, dtype=np.float32)
        if self._settings.dense_fusion == "rerank":
            return self._rerank(lexical, matched, query_vector, k)
        dense = self._vectors @ query_vector
        fused: dict[int, float] = {}
        depth = max(k, FUSION_DEPTH)
        for ranking in (_top(lexical, depth, keep=matched), _top(dense, depth, keep=None)):
            for rank, (row, _) in enumerate(ranking, start=1):
                fused[row] = fused.get(row, 0.0) + 1.0 / (FACT_RRF_K + rank)
        best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        return best[:k]

    def lexical_scores(self, query: str) -> np.ndarray:
        """Return the lexical score of every row for ``query``."""
        return self._lexical(query)[0]

    def _lexical(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        terms = fact_tokens(query, self._stemmer)
        weights = _query_weights(terms)
        scores, matched = self._terms.scores(weights)
        settings = self._settings
        if settings.feedback_docs > 0 and matched.any():
            feedback = _top(scores, settings.feedback_docs, keep=matched)
            expanded = self._expand(weights, feedback)
            scores, matched = self._terms.scores(expanded)
        if self._ordered is not None and self._unordered is not None and terms:
            term_w, ordered_w, unordered_w = settings.phrase_weights or (1.0, 0.0, 0.0)
            ordered, _ = self._ordered.scores(_query_weights(_ordered_pairs(terms)))
            unordered, _ = self._unordered.scores(
                _query_weights(_unordered_pairs(terms, settings.window))
            )
            scores = term_w * scores + ordered_w * ordered + unordered_w * unordered
        return self._with_context(scores, matched)

    def _with_context(
        self, scores: np.ndarray, matched: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Add to each row a share of its neighbours' scores (and their evidence, if open)."""
        weight = self._settings.context_weight
        if weight <= 0 or not matched.any():
            return scores, matched
        spread, evidence = scores.copy(), matched.copy()
        for distance, together in enumerate(self._together, start=1):
            share = weight / distance
            spread[distance:] += share * scores[:-distance] * together
            spread[:-distance] += share * scores[distance:] * together
            if self._context_results:
                evidence[distance:] |= matched[:-distance] & together
                evidence[:-distance] |= matched[distance:] & together
        return spread, evidence

    def _expand(
        self, weights: dict[str, float], feedback: list[tuple[int, float]]
    ) -> dict[str, float]:
        """RM3: mix the query with the top terms of the feedback documents' relevance model."""
        model: dict[str, float] = {}
        for row, score in feedback:
            document = self._corpus[row]
            for term, count in Counter(document).items():
                model[term] = model.get(term, 0.0) + score * count / len(document)
        best = sorted(model.items(), key=lambda item: (-item[1], item[0]))
        best = best[: self._settings.feedback_terms]
        norm = sum(w for _, w in best) or 1.0
        alpha = self._settings.original_weight
        mixed = {term: alpha * w for term, w in weights.items()}
        for term, w in best:
            mixed[term] = mixed.get(term, 0.0) + (1 - alpha) * w / norm
        return mixed

    def _rerank(
        self, lexical: np.ndarray, matched: np.ndarray, query_vector: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """Re-rank the lexical top rows by dense similarity; fill up by dense similarity alone.

        Rows with lexical evidence score ``1 + mix`` (``mix`` in [0, 1]: min-max-normalized
        lexical and dense scores, interpolated); when fewer than ``k`` rows share a term with
        the query, the rest come by dense similarity alone, scored below 1.
        """
        if self._vectors is None:
            return []
        rows = [row for row, _ in _top(lexical, self._settings.rerank_depth, keep=matched)]
        weight = self._settings.dense_weight
        best: list[tuple[int, float]] = []
        if rows:
            dense = self._vectors[rows] @ query_vector
            mixed = 1 + (1 - weight) * _minmax(lexical[rows]) + weight * _minmax(dense)
            best = sorted(zip(rows, mixed.tolist(), strict=True), key=lambda i: (-i[1], i[0]))
        if len(best) < k:
            rest = np.ones(self._size, dtype=bool)
            rest[rows] = False
            dense_all = self._vectors @ query_vector
            fill = _top(dense_all, k - len(best), keep=rest)
            best += [(row, weight * max(score, 0.0)) for row, score in fill]
        return best[:k]


def _query_weights(terms: Sequence[str]) -> dict[str, float]:
    """Return each query term's share of the query (1/|q| per occurrence)."""
    if not terms:
        return {}
    counts = Counter(terms)
    return {term: count / len(terms) for term, count in counts.items()}


def _ordered_pairs(terms: Sequence[str]) -> list[str]:
    return [f"{a} {b}" for a, b in zip(terms, terms[1:], strict=False)]


def _unordered_pairs(terms: Sequence[str], window: int) -> list[str]:
    pairs = []
    for i, first in enumerate(terms):
        for second in terms[i + 1 : i + window]:
            if first != second:
                pairs.append(" ".join(sorted((first, second))))
    return pairs


def _minmax(values: np.ndarray) -> np.ndarray:
    span = float(values.max() - values.min())
    return (values - values.min()) / span if span > 0 else np.ones_like(values)


def _top(scores: np.ndarray, k: int, *, keep: np.ndarray | None) -> list[tuple[int, float]]:
    """Return the ``k`` best (row, score) pairs among rows where ``keep`` holds, best first."""
    candidates = np.arange(len(scores)) if keep is None else np.flatnonzero(keep)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    ordered = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), i))
    return [(i, float(scores[i])) for i in ordered]
