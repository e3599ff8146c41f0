"""Token ids of texts as a BERT WordPiece tokenizer gives them, with repeated words looked up once.

Running the tokenizer over every chunk of a large project costs more than the rest of the
static embedding. BERT's tokenizer normalizes one character at a time, drops ASCII whitespace
and splits off each punctuation character, so a text's ids are its whitespace-separated
segments' ids one after the other, and code repeats its segments a lot. Printable-ASCII
segments are split and matched against the vocabulary here (lowercased; letters and digits
form words, every other character is a word of its own; greedy longest-match WordPiece), the
rest (non-ASCII or control characters, special tokens such as ``[CLS]``) go to the tokenizer
itself. Tokenizers of another kind
are always called directly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

SEGMENT_CACHE_SIZE = 500_000
"""Distinct segments whose ids are kept (memory bound; the cache is emptied when full)."""

_SEGMENT = re.compile(r"[^ \t\n\r]+")
"""A run of characters between the whitespace BERT drops between words."""
_PRINTABLE_ASCII = re.compile(r"[!-~]+")
_WORDS = re.compile(r"[a-z0-9]+|[^a-z0-9]")
"""After lowercasing printable ASCII: runs of letters and digits, and each other character
(all of them punctuation to BERT)."""


class TokenIds:
    """Return the first token ids of texts, tokenized the way ``tokenizer`` does it."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        model, normalizer = tokenizer.model, tokenizer.normalizer
        self._bert = (
            type(model).__name__ == "WordPiece"
            and type(normalizer).__name__ == "BertNormalizer"
            and normalizer.lowercase
            and normalizer.clean_text
            and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
        )
        # Pieces are looked up one by one (``token_to_id``): copying the whole vocabulary into
        # a dict would cost every process that embeds one query tens of milliseconds.
        self._token_id = tokenizer.token_to_id
        unk = self._token_id(model.unk_token) if self._bert else None
        self._unk = -1 if unk is None else int(unk)
        self._prefix = str(model.continuing_subword_prefix) if self._bert else ""
        self._max_word = int(model.max_input_chars_per_word) if self._bert else 0
        # Special tokens written in the text ("[CLS]") are matched before normalization.
        self._added = [t.content for t in tokenizer.get_added_tokens_decoder().values()]
        self._segments: dict[str, list[int]] = {}
        self._words: dict[str, list[int]] = {}

    def first(self, text: str, limit: int) -> list[int]:
        """Return the first ``limit`` ids of ``text`` (no special tokens added)."""
        if not self._bert:
            return list(self._tokenizer.encode(text, add_special_tokens=False).ids[:limit])
        known = self._segments
        ids: list[int] = []
        for segment in _SEGMENT.findall(text):
            found = known.get(segment)
            ids += found if found is not None else _remember(known, segment, self._segment_ids)
            if len(ids) >= limit:
                break
        return ids[:limit]

    def _segment_ids(self, segment: str) -> list[int]:
        if not _PRINTABLE_ASCII.fullmatch(segment) or any(t in segment for t in self._added):
            return list(self._tokenizer.encode(segment, add_special_tokens=False).ids)
        ids: list[int] = []
        words = self._words
        for word in _WORDS.findall(segment.lower()):
            found = words.get(word)
            ids += found if found is not None else _remember(words, word, self._word_pieces)
        return ids

    def _word_pieces(self, word: str) -> list[int]:
        """Greedy longest-match WordPiece of one word; the unknown token if a piece is missing."""
        if len(word) > self._max_word:
            return [self._unk]
        token_id, pieces, start = self._token_id, [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                found = token_id(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return [self._unk]
            start = end
        return pieces


def _remember(
    cache: dict[str, list[int]], key: str, compute: Callable[[str], list[int]]
) -> list[int]:
    """Compute and keep ``key``'s ids, emptying the cache first when it is full."""
    if len(cache) >= SEGMENT_CACHE_SIZE:
        cache.clear()
    found = cache[key] = compute(key)
    return found
