"""Decide when a new memory collides with an existing one (pure rules, no I/O).

Two texts conflict when they differ only in numbers or versions ("Java 17" vs "Java 21"),
or when their character-bigram similarity (Dice coefficient over bigram sets) reaches the
threshold. Identical texts (after normalization) are duplicates.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "SIMILARITY_THRESHOLD",
    "ConflictIndex",
    "ConflictKind",
    "ConflictMatch",
    "bigram_similarity",
    "bigrams",
    "conflict_kind",
    "find_conflicts",
    "normalize",
    "skeleton",
]

SIMILARITY_THRESHOLD = 0.8
"""Character-bigram similarity at or above which two memories conflict."""

ConflictKind = Literal["duplicate", "numbers", "similar"]

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.。!！;；,，]+$")
_NUMBER = re.compile(r"v?\d+(?:[._,]\d+)*", re.IGNORECASE)
_NUMBER_MASK = "#"


@dataclass(frozen=True)
class ConflictMatch:
    """One existing text a new text collides with."""

    index: int
    """Position of the existing text in the collection that was checked."""

    kind: ConflictKind
    """Why they collide: same text, numbers/versions only, or near-identical wording."""

    similarity: float
    """Character-bigram similarity of the two normalized texts, 0..1."""


def normalize(text: str) -> str:
    """Fold case, width and whitespace, and drop trailing punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING.sub("", _SPACES.sub(" ", folded).strip())


def skeleton(text: str) -> str:
    """Return the normalized text with every number or version replaced by one mask."""
    return _NUMBER.sub(_NUMBER_MASK, normalize(text))


def bigrams(text: str) -> frozenset[str]:
    """Return the set of character bigrams of the normalized text."""
    norm = normalize(text)
    if len(norm) < 2:
        return frozenset({norm}) if norm else frozenset()
    return frozenset(norm[i : i + 2] for i in range(len(norm) - 1))


def bigram_similarity(a: str, b: str) -> float:
    """Return the Dice coefficient of the two texts' character-bigram sets."""
    left, right = bigrams(a), bigrams(b)
    if not left and not right:
        return 1.0
    return 2 * len(left & right) / (len(left) + len(right))


def conflict_kind(
    new: str, old: str, *, threshold: float = SIMILARITY_THRESHOLD
) -> ConflictKind | None:
    """Classify how ``new`` collides with ``old``, or return None when it does not."""
    if normalize(new) == normalize(old):
        return "duplicate"
    if skeleton(new) == skeleton(old):
        return "numbers"
    if bigram_similarity(new, old) >= threshold:
        return "similar"
    return None


def find_conflicts(
    new: str, existing: Sequence[str], *, threshold: float = SIMILARITY_THRESHOLD
) -> list[ConflictMatch]:
    """Check ``new`` against every text in ``existing`` (linear scan; see ConflictIndex)."""
    matches = []
    for index, old in enumerate(existing):
        kind = conflict_kind(new, old, threshold=threshold)
        if kind is not None:
            matches.append(ConflictMatch(index, kind, bigram_similarity(new, old)))
    return matches


class ConflictIndex:
    """Answer the same question as :func:`find_conflicts` in milliseconds for 10k texts.

    Bigram sets are kept as rows of a sparse 0/1 matrix, so the overlap with every stored
    text is one sparse matrix-vector product; numbers-only twins are found through a
    dictionary keyed by :func:`skeleton`. Texts added after the matrix was built are
    compared as plain sets until ``REBUILD_AFTER`` of them have piled up.
    """

    REBUILD_AFTER = 256

    def __init__(self, texts: Iterable[str] = (), *, threshold: float = SIMILARITY_THRESHOLD):
        self.threshold = threshold
        self._vocab: dict[str, int] = {}
        self._indices = array("i")
        self._indptr = array("q", [0])
        self._skeletons: dict[str, list[int]] = {}
        self._normals: list[str] = []
        self._matrix: _BigramRows | None = None
        self._pending: list[frozenset[str]] = []
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._normals)

    def add(self, text: str) -> int:
        """Add a text and return its row number."""
        row = len(self._normals)
        grams = bigrams(text)
        columns = sorted({self._vocab.setdefault(g, len(self._vocab)) for g in grams})
        self._indices.extend(columns)
        self._indptr.append(len(self._indices))
        self._normals.append(normalize(text))
        self._skeletons.setdefault(skeleton(text), []).append(row)
        if self._matrix is not None:
            self._pending.append(grams)
            if len(self._pending) >= self.REBUILD_AFTER:
                self._matrix = None
        return row

    def matches(self, text: str) -> list[ConflictMatch]:
        """Return the stored rows ``text`` collides with, most similar first."""
        if not self._normals:
            return []
        norm, grams = normalize(text), bigrams(text)
        sims = self._similarities(grams)
        found: dict[int, ConflictMatch] = {}
        for row in self._skeletons.get(skeleton(text), []):
            kind: ConflictKind = "duplicate" if self._normals[row] == norm else "numbers"
            found[row] = ConflictMatch(row, kind, float(sims[row]))
        for row in np.flatnonzero(sims >= self.threshold).tolist():
            if row not in found:
                kind = "duplicate" if self._normals[row] == norm else "similar"
                found[row] = ConflictMatch(row, kind, float(sims[row]))
        return sorted(found.values(), key=lambda m: (-m.similarity, m.index))

    def _similarities(self, grams: frozenset[str]) -> np.ndarray:
        """Dice similarity of ``grams`` with every stored row."""
        matrix = self._ensure_matrix()
        known = [
            self._vocab[g] for g in grams if self._vocab.get(g, matrix.columns) < matrix.columns
        ]
        # The rows sharing each bigram, counted per row: a sparse matrix-vector product over
        # the postings of the query's bigrams only.
        shared = [matrix.rows[matrix.starts[c] : matrix.starts[c + 1]] for c in known]
        overlap = np.bincount(
            np.concatenate(shared) if shared else np.zeros(0, dtype=np.int64),
            minlength=matrix.count,
        )
        total = matrix.lengths + len(grams)
        base = np.divide(2 * overlap, total, out=np.ones_like(total), where=total > 0)
        tail = [
            2 * len(grams & other) / (len(grams) + len(other)) if grams or other else 1.0
            for other in self._pending
        ]
        return np.concatenate([base, np.asarray(tail, dtype=np.float64)])

    def _ensure_matrix(self) -> _BigramRows:
        if self._matrix is None:
            # Only copies are kept: a view kept alive would pin the arrays and block appends.
            indices = np.frombuffer(self._indices, dtype=np.int32)
            lengths: np.ndarray = np.diff(np.frombuffer(self._indptr, dtype=np.int64))
            count, columns = len(self._normals), len(self._vocab)
            rows = np.repeat(np.arange(count, dtype=np.int64), lengths)
            order = np.argsort(indices, kind="stable")
            self._matrix = _BigramRows(
                rows=rows[order],
                starts=np.searchsorted(indices[order], np.arange(columns + 1)),
                lengths=lengths.astype(np.float64),
                count=count,
                columns=columns,
            )
            self._pending = []
        return self._matrix


@dataclass(frozen=True)
class _BigramRows:
    """The stored bigram sets by column: bigram ``c`` is in ``rows[starts[c]:starts[c + 1]]``."""

    rows: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    count: int
    columns: int
