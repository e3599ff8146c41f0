"""Decide when a new memory collides with an existing one (pure rules, no I/O).

Two texts conflict when they differ only in numbers or versions ("Java 17" vs "Java 21"),
when their character-bigram similarity (Dice coefficient over bigram sets) reaches the
threshold, or when they say something else about the same subject: word for word alike but
for one short value ("The database is PostgreSQL" vs "... is MySQL") or a negation ("... are
enabled" vs "... are not enabled"). Identical texts (after normalization) are duplicates.

The value rule reads only the texts' shape, so it also fires on facts that can both be true
of a subject with several values ("Alice owns billing" and "Alice owns auth"): a conflict only
asks the person to choose (replace, keep both, or neither), never drops a fact by itself.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

SIMILARITY_THRESHOLD = 0.8
"""Character-bigram similarity at or above which two memories conflict."""

ConflictKind = Literal["duplicate", "numbers", "similar", "value"]

VALUE_CANDIDATE_SIMILARITY = 0.3
"""Bigram similarity below which two texts are not compared word by word (a cheap filter:
texts that share a subject and most of their words are far above it)."""

MAX_VALUE_WORDS = 4
"""Longest value (in words) the value rule treats as one replaced value."""

_WORD = re.compile(r"[^\s,;:!?()\"“”]+")
_NEGATIONS = frozenset(
    {"not", "never", "no", "don't", "doesn't", "isn't", "aren't", "won't", "shouldn't", "cannot"}
)
# Words that open a relation rather than a value: a changed one means another statement
# ("tests run with pytest" / "tests run in CI"), not another value of the same one.
_RELATION_WORDS = frozenset(
    {
        "with", "in", "on", "at", "to", "from", "by", "for", "of", "into", "onto", "under",
        "over", "after", "before", "via", "through", "without", "within", "as", "and", "or",
        "but", "when", "if", "unless", "only", "also", "every", "each",
    }
)  # fmt: skip

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
    similarity = bigram_similarity(new, old)
    if similarity >= threshold:
        return "similar"
    if similarity >= VALUE_CANDIDATE_SIMILARITY and other_value(words(new), words(old)):
        return "value"
    return None


def words(text: str) -> tuple[str, ...]:
    """Return the normalized text's words (paths, versions and flags stay whole)."""
    return tuple(w.strip(".'") for w in _WORD.findall(normalize(text)) if w.strip(".'"))


def other_value(new: Sequence[str], old: Sequence[str]) -> bool:
    """Return True when two word sequences say something else about the same subject.

    Either one negation word is all that sets them apart, or one short run of words (the
    value) is replaced, at most one lone word is added or dropped elsewhere, the value does
    not open with a relation word, and the words they share are at least half of the longer
    text (and two or more).
    """
    if not _enough_shared(len(set(new) & set(old)), len(new), len(old)):
        return False  # the same bound the index filters with, before any alignment
    ops = [
        op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]  # fmt: skip
    if not ops:
        return False
    shared = len(new) - sum(j2 - j1 for _, _, _, j1, j2 in ops)
    if len(ops) == 1 and ops[0][0] in ("insert", "delete"):
        _, i1, i2, j1, j2 = ops[0]
        changed = old[i1:i2] or new[j1:j2]
        return shared >= 2 and all(w in _NEGATIONS for w in changed)
    replaced = [op for op in ops if op[0] == "replace"]
    extra = [op for op in ops if op[0] != "replace"]
    if len(replaced) != 1 or len(extra) > 1:
        return False
    if extra and max(extra[0][2] - extra[0][1], extra[0][4] - extra[0][3]) > 1:
        return False
    _, i1, i2, j1, j2 = replaced[0]
    before, after = old[i1:i2], new[j1:j2]
    if max(len(before), len(after)) > MAX_VALUE_WORDS:
        return False
    if before[0] in _RELATION_WORDS or after[0] in _RELATION_WORDS:
        return False
    return bool(_enough_shared(shared, len(new), len(old)))


def _enough_shared(shared: int | np.ndarray, new: int, old: int | np.ndarray) -> Any:
    """Whether ``shared`` words are two or more and at least half of the longer text."""
    return (shared >= 2) & (2 * shared >= np.maximum(new, old))


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

    Each text's bigram set and word set are kept as postings (the rows holding each bigram,
    each word), so the overlap of a new text with every stored one is a count over the
    postings of its own bigrams and words; numbers-only twins are found through a dictionary
    keyed by :func:`skeleton`. Only texts sharing enough words are aligned word by word.
    """

    def __init__(self, texts: Iterable[str] = (), *, threshold: float = SIMILARITY_THRESHOLD):
        self.threshold = threshold
        self._grams = _Postings()
        self._terms = _Postings()
        self._skeletons: dict[str, list[int]] = {}
        self._normals: list[str] = []
        self._words: list[tuple[str, ...]] = []
        self._word_counts = array("q")
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._normals)

    def add(self, text: str) -> int:
        """Add a text and return its row number."""
        row = len(self._normals)
        self._grams.add(bigrams(text))
        self._words.append(words(text))
        self._word_counts.append(len(self._words[-1]))
        self._terms.add(frozenset(self._words[-1]))
        self._normals.append(normalize(text))
        self._skeletons.setdefault(skeleton(text), []).append(row)
        return row

    def matches(self, text: str) -> list[ConflictMatch]:
        """Return the stored rows ``text`` collides with, most similar first."""
        if not self._normals:
            return []
        norm, grams = normalize(text), bigrams(text)
        overlap, sizes = self._grams.overlap(grams)
        total = sizes + len(grams)
        sims = np.divide(2 * overlap, total, out=np.ones_like(total), where=total > 0)
        found: dict[int, ConflictMatch] = {}
        for row in self._skeletons.get(skeleton(text), []):
            kind: ConflictKind = "duplicate" if self._normals[row] == norm else "numbers"
            found[row] = ConflictMatch(row, kind, float(sims[row]))
        for row in np.flatnonzero(sims >= self.threshold).tolist():
            if row not in found:
                kind = "duplicate" if self._normals[row] == norm else "similar"
                found[row] = ConflictMatch(row, kind, float(sims[row]))
        mine = words(text)
        shared, _ = self._terms.overlap(frozenset(mine))
        lengths = np.array(self._word_counts, dtype=np.int64)  # a copy: appends stay possible
        near = (
            (sims >= VALUE_CANDIDATE_SIMILARITY)
            & (sims < self.threshold)
            & _enough_shared(shared, len(mine), lengths)
        )
        for row in np.flatnonzero(near).tolist():
            if row not in found and other_value(mine, self._words[row]):
                found[row] = ConflictMatch(row, "value", float(sims[row]))
        return sorted(found.values(), key=lambda m: (-m.similarity, m.index))


class _Postings:
    """Sets of keys by row, searchable by key: the rows holding each key.

    Rows added after the postings were built are compared as plain sets until
    ``REBUILD_AFTER`` of them have piled up.
    """

    REBUILD_AFTER = 256

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._indices = array("i")
        self._indptr = array("q", [0])
        self._built: _KeyRows | None = None
        self._pending: list[frozenset[str]] = []

    def add(self, keys: frozenset[str]) -> None:
        columns = sorted({self._vocab.setdefault(k, len(self._vocab)) for k in keys})
        self._indices.extend(columns)
        self._indptr.append(len(self._indices))
        if self._built is not None:
            self._pending.append(keys)
            if len(self._pending) >= self.REBUILD_AFTER:
                self._built = None

    def overlap(self, keys: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
        """Return, for every row, how many of ``keys`` it holds and how many keys it has."""
        built = self._ensure_built()
        known = [self._vocab[k] for k in keys if self._vocab.get(k, built.columns) < built.columns]
        shared = [built.rows[built.starts[c] : built.starts[c + 1]] for c in known]
        counts = np.bincount(
            np.concatenate(shared) if shared else np.zeros(0, dtype=np.int64),
            minlength=built.count,
        ).astype(np.float64)
        tail = np.asarray([len(keys & other) for other in self._pending], dtype=np.float64)
        sizes = np.asarray([len(other) for other in self._pending], dtype=np.float64)
        return np.concatenate([counts, tail]), np.concatenate([built.sizes, sizes])

    def _ensure_built(self) -> _KeyRows:
        if self._built is None:
            # Only copies are kept: a view kept alive would pin the arrays and block appends.
            indices = np.frombuffer(self._indices, dtype=np.int32)
            sizes: np.ndarray = np.diff(np.frombuffer(self._indptr, dtype=np.int64))
            count, columns = len(sizes), len(self._vocab)
            rows = np.repeat(np.arange(count, dtype=np.int64), sizes)
            order = np.argsort(indices, kind="stable")
            self._built = _KeyRows(
                rows=rows[order],
                starts=np.searchsorted(indices[order], np.arange(columns + 1)),
                sizes=sizes.astype(np.float64),
                count=count,
                columns=columns,
            )
            self._pending = []
        return self._built


@dataclass(frozen=True)
class _KeyRows:
    """The rows by key: key ``c`` is held by ``rows[starts[c]:starts[c + 1]]``."""

    rows: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    count: int
    columns: int
