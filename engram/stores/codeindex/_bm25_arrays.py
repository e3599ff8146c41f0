"""Build a bm25s model's score matrix with NumPy array operations instead of per-document loops.

``bm25s.BM25.index`` counts terms with a ``Counter`` and scores each document in a Python
loop, which takes seconds on a large tree. This module computes the same sparse matrix from
the same formulas (Lucene BM25: ``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` with
``math.log``, ``tf / (k1 * (1 - b + b * len / avg_len) + tf)`` in float64, stored as float32)
in whole-array steps, so every (document, term) score is bit for bit the one bm25s computes
and a saved model reads and scores exactly as one bm25s built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

EMPTY_TERM = ""
"""The term bm25s adds to every vocabulary (and that empty documents are made of)."""


def build_model(token_lists: Sequence[Sequence[str]], k1: float, b: float) -> Any:
    """Return a ``bm25s.BM25`` model indexed over ``token_lists`` (one list per document).

    An empty list is indexed as the single term ``""``, as ``LexicalIndex.build`` always did.
    """
    import bm25s

    model = bm25s.BM25(k1=k1, b=b)
    docs = [t if len(t) else (EMPTY_TERM,) for t in token_lists]
    lengths = np.fromiter((len(t) for t in docs), dtype=np.int64, count=len(docs))
    vocab = {term: i for i, term in enumerate(dict.fromkeys(chain.from_iterable(docs)))}
    terms = np.fromiter(
        map(vocab.__getitem__, chain.from_iterable(docs)), dtype=np.int64, count=int(lengths.sum())
    )
    model.nonoccurrence_array = None  # only BM25L and BM25+ subtract one
    model.scores = _score_matrix(terms, lengths, len(vocab), k1, b, model.dtype)
    if EMPTY_TERM not in vocab:
        vocab[EMPTY_TERM] = len(vocab)
    model.vocab_dict = vocab
    model.unique_token_ids_set = set(vocab.values())
    return model


def _score_matrix(
    terms: np.ndarray, lengths: np.ndarray, n_vocab: int, k1: float, b: float, dtype: str
) -> dict[str, Any]:
    """Return bm25s's ``scores`` dict: a CSC matrix (documents × terms) of BM25 weights."""
    n_docs = len(lengths)
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    pairs, tf = np.unique(docs * n_vocab + terms, return_counts=True)
    pair_docs, pair_terms = np.divmod(pairs, n_vocab)
    df = np.bincount(pair_terms, minlength=n_vocab)
    idf = np.array([_idf(int(d), n_docs) for d in df], dtype=dtype)
    avg_len = lengths.mean()
    norm = k1 * ((1 - b) + b * lengths.astype(np.float64) / avg_len)
    tf_values = tf.astype(dtype)
    weights = (idf[pair_terms] * (tf_values / (norm[pair_docs] + tf_values))).astype(dtype)
    # Column-major order; pairs are sorted by document, and a stable sort keeps that per term.
    order = np.argsort(pair_terms, kind="stable")
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {
        "data": weights[order],
        "indices": pair_docs[order].astype(np.int32),
        "indptr": indptr,
        "num_docs": n_docs,
    }


def _idf(df: int, n_docs: int) -> float:
    """Lucene's idf of a term in ``df`` of ``n_docs`` documents (``math.log``, as bm25s)."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) if df else 0.0
