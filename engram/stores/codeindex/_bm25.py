"""BM25 over chunk tokens (bm25s): identifier-aware tokenizing, building, saving, scoring."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Collection, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

BM25_K1 = 1.2
BM25_B = 0.75
IDS_FILE = "ids.json"
UNREADABLE = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    AttributeError,
    EOFError,
    RecursionError,
)
"""What reading a damaged saved index raises; such an index is rebuilt, not read."""

BM25_STOPWORDS = frozenset(
    """a an and are as at be been but by can could do does for from has have if in into is it
    its may might must no not of on or our shall should so such that the their them then there
    these they this those to was we were what when where which while who will with would you
    your i me my he she his her us also just only than too very via""".split()
)
"""English function words dropped from queries and chunks; code words are kept."""

_IDENT = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def code_tokens(text: str) -> list[str]:
    """Split text into lowercase terms: identifiers, their snake/camel parts, numbers.

    ``parseHTTPResponse_v2`` yields ``parsehttpresponse_v2``, ``parse``, ``http``, ``response``,
    ``v``, ``2``; English stopwords are dropped.
    """
    out: list[str] = []
    for word in _IDENT.findall(text):
        out.extend(_word_terms(word))
    return out


@lru_cache(maxsize=262_144)
def _word_terms(word: str) -> tuple[str, ...]:
    # Identifiers repeat a lot within a code base; splitting each distinct one once matters.
    parts = [p.lower() for piece in word.split("_") for p in _CAMEL.findall(piece)]
    whole = word.lower().strip("_")
    kept = tuple(p for p in parts if p not in BM25_STOPWORDS)
    return (whole, *kept) if len(parts) > 1 and whole else kept


def query_tokens(text: str) -> list[str]:
    """Tokenize a query and keep each term once (long queries repeat themselves)."""
    return list(dict.fromkeys(code_tokens(text)))


class LexicalIndex:
    """A BM25 index over documents identified by string ids."""

    def __init__(self, ids: Sequence[str], model: object | None) -> None:
        self.ids = list(ids)
        self._model = model

    @classmethod
    def build(cls, ids: Sequence[str], token_lists: Sequence[Sequence[str]]) -> LexicalIndex:
        """Index one token list per id."""
        from engram.stores.codeindex._bm25_arrays import build_model

        if not ids:
            return cls([], None)
        return cls(ids, build_model(token_lists, BM25_K1, BM25_B))

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Return the BM25 score of every document for the query tokens."""
        if self._model is None or not tokens:
            return np.zeros(len(self.ids), dtype=np.float32)
        vocab = self._model.vocab_dict  # type: ignore[attr-defined]
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self._model.get_scores(known), dtype=np.float32)  # type: ignore[attr-defined]

    def top(self, tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        """Return the ``k`` best (id, score) pairs with a positive score."""
        scores = self.scores(tokens)
        return [(self.ids[i], float(scores[i])) for i in _best(scores, k)]

    def save(self, folder: Path, generation: int) -> None:
        """Write the index to ``folder`` atomically (temp folder, then rename)."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        try:
            if self._model is not None:
                self._model.save(str(tmp), show_progress=False)  # type: ignore[attr-defined]
            (tmp / IDS_FILE).write_text(
                json.dumps({"generation": generation, "ids": self.ids}), encoding="utf-8"
            )
            old = folder.with_name(f".{folder.name}.old")
            if folder.exists():
                os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def load_ids(folder: Path) -> tuple[list[str], int] | None:
        """Read only the ids and generation of a saved index (no matrices, no vocabulary)."""
        try:
            meta = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
            return [str(i) for i in meta["ids"]], int(meta["generation"])
        except UNREADABLE:
            return None

    @classmethod
    def load(cls, folder: Path) -> tuple[LexicalIndex, int] | None:
        """Load an index and its generation; None when absent or unreadable."""
        import bm25s

        try:
            meta = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
            ids = [str(i) for i in meta["ids"]]
            generation = int(meta["generation"])
            # Arrays only: a saved pickle is refused, never run. Mapped, not read: a query
            # touches only its terms' columns, so a long-lived process keeps only those
            # resident. The folder is replaced whole, never written in place (``save``).
            model = (
                bm25s.BM25.load(
                    str(folder),
                    show_progress=False,
                    allow_pickle=False,
                    load_corpus=False,
                    mmap=True,
                )
                if ids
                else None
            )
        except UNREADABLE:
            return None
        return cls(ids, model), generation


class SegmentedLexical:
    """A large base BM25 index plus a small delta of chunks added since it was built.

    Rebuilding BM25 over a whole large tree takes seconds; after a small change only the
    delta is rebuilt and base documents that no longer exist are masked out. Scores of the
    two segments use their own statistics and are merged by value, which is close enough for
    ranking until the delta grows and the owner rebuilds the base.
    """

    def __init__(self, base: LexicalIndex, delta: LexicalIndex, removed: Collection[str]) -> None:
        self.base = base
        self.delta = delta
        removed_set = set(removed)
        self._mask = np.array([i not in removed_set for i in base.ids], dtype=bool)
        self.ids = [i for i, keep in zip(base.ids, self._mask, strict=True) if keep] + list(
            delta.ids
        )

    def containing(self, token: str) -> list[str]:
        """Return the ids of live documents that contain ``token``."""
        found: list[str] = []
        scores = self.base.scores([token])
        if len(scores):
            found += [self.base.ids[i] for i in np.nonzero((scores > 0) & self._mask)[0]]
        scores = self.delta.scores([token])
        if len(scores):
            found += [self.delta.ids[i] for i in np.nonzero(scores > 0)[0]]
        return found

    def top(self, tokens: Sequence[str], k: int) -> list[tuple[str, float]]:
        """Return the ``k`` best (id, score) pairs over both segments."""
        scores = self.base.scores(tokens)
        if len(scores):
            scores = np.where(self._mask, scores, 0.0)
        pairs = [(self.base.ids[i], float(scores[i])) for i in _best(scores, k)]
        pairs += self.delta.top(tokens, k)
        pairs.sort(key=lambda pair: -pair[1])
        return pairs[:k]


def _best(scores: np.ndarray, k: int) -> list[int]:
    if not len(scores) or k <= 0:
        return []
    k = min(k, len(scores))
    best = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in best[np.argsort(-scores[best], kind="stable")] if scores[i] > 0]
