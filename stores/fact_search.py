"""Rank facts for a query: BM25 (bm25s) over fact text, fused with dense similarity.

Dense scores join only when vectors are supplied (the facts store does so once the visible
set is large); the two rankings are fused with reciprocal rank fusion. Fact vectors are
cached in the store, keyed by embedding model and text hash, so each text is embedded once.
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from stores.project_key import namespace_label

__all__ = [
    "FUSION_DEPTH",
    "RRF_K",
    "FactIndex",
    "TextEmbedder",
    "load_vectors",
    "new_stemmer",
    "tokenize",
]

RRF_K = 60
"""Reciprocal-rank-fusion constant (the usual 60)."""
FUSION_DEPTH = 100
"""How many of each ranking's best rows take part in the fusion."""
EMBED_BATCH = 64
LOOKUP_BATCH = 500
"""Vector lookups per store round trip (SQLite caps the parameters of one statement)."""
VECTOR_ROOT = "facts_vectors"

_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+(?:[.,:]\d+)*", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


class TextEmbedder(Protocol):
    """The slice of an embedder facts need (``stores.embedders.Embedder`` fits)."""

    @property
    def model_id(self) -> str:
        """Identify the model, so cached vectors of another model are never mixed in."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one L2-normalized float32 row per text."""
        ...


def new_stemmer() -> Stemmer.Stemmer:
    """Return an English Snowball stemmer (each index keeps its own, with its word cache)."""
    return Stemmer.Stemmer("english")


def tokenize(text: str, stemmer: Stemmer.Stemmer | None = None) -> list[str]:
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


class FactIndex:
    """An immutable ranking index over a list of fact texts."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> None:
        self._size = len(texts)
        self._bm25 = bm25s.BM25()
        self._stemmer = new_stemmer()
        corpus = [tokenize(t, self._stemmer) for t in texts]
        self._empty = not any(corpus)
        if not self._empty:
            self._bm25.index(corpus, show_progress=False)
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
        lexical = self.lexical_scores(query)
        if query_vector is None or self._vectors is None:
            return _top(lexical, k, keep=lexical > 0)
        dense = self._vectors @ np.asarray(query_vector, dtype=np.float32)
        fused: dict[int, float] = {}
        depth = max(k, FUSION_DEPTH)
        for ranking in (_top(lexical, depth, keep=lexical > 0), _top(dense, depth, keep=None)):
            for rank, (row, _) in enumerate(ranking, start=1):
                fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        return best[:k]

    def lexical_scores(self, query: str) -> np.ndarray:
        """Return the BM25 score of every row for ``query``."""
        terms = tokenize(query, self._stemmer)
        if self._empty or not terms:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(terms), dtype=np.float32)


def _top(scores: np.ndarray, k: int, *, keep: np.ndarray | None) -> list[tuple[int, float]]:
    """Return the ``k`` best (row, score) pairs among rows where ``keep`` holds, best first."""
    candidates = np.arange(len(scores)) if keep is None else np.flatnonzero(keep)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    ordered = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), i))
    return [(i, float(scores[i])) for i in ordered]


def load_vectors(store: BaseStore, embedder: TextEmbedder, texts: Sequence[str]) -> np.ndarray:
    """Return one vector per text, embedding (and caching in ``store``) only unseen texts."""
    namespace = (VECTOR_ROOT, namespace_label(embedder.model_id))
    keys = [hashlib.sha256(t.encode()).hexdigest()[:32] for t in texts]
    unique = list(dict.fromkeys(keys))
    results = []
    for start in range(0, len(unique), LOOKUP_BATCH):
        results += store.batch([GetOp(namespace, k) for k in unique[start : start + LOOKUP_BATCH]])
    found: dict[str, np.ndarray] = {}
    for key, item in zip(unique, results, strict=True):
        if isinstance(item, Item) and isinstance(item.value.get("vector"), str):
            found[key] = np.frombuffer(base64.b64decode(item.value["vector"]), dtype=np.float32)
    missing = [(key, text) for key, text in dict(zip(keys, texts, strict=True)).items()
               if key not in found]
    for start in range(0, len(missing), EMBED_BATCH):
        chunk = missing[start : start + EMBED_BATCH]
        rows = np.asarray(embedder.embed([text for _, text in chunk]), dtype=np.float32)
        ops = []
        for (key, _), row in zip(chunk, rows, strict=True):
            found[key] = row
            encoded = base64.b64encode(row.tobytes()).decode()
            ops.append(PutOp(namespace, key, {"vector": encoded}, index=False))
        store.batch(ops)
    return np.vstack([found[key] for key in keys]) if keys else np.zeros((0, 1), np.float32)
