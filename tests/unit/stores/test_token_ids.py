"""Cached token ids match the shipped BERT tokenizer exactly, text by text."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from engram.stores.embeddings import STATIC_FOLDER
from engram.stores.embeddings._static import StaticEmbedder
from engram.stores.embeddings._token_ids import TokenIds

TEXTS = [
    "def parseHTTPResponse_v2(self, raw):\n    return self._cache.get(raw) or None",
    "class Café(Model):  # naïve façade — ünïcödé\u00a0spaces\u2003and 中文 tokens",
    "control\x1cchars\x00here\x7f and\x0bvertical\x0ctabs\rcarriage",
    "[CLS] special [SEP] tokens[UNK]inside[MASK] words [PAD]",
    "x" * 99 + " " + "y" * 100 + " " + "z" * 101,
    "snake_case_identifiers and CamelCaseOnes with 123numbers4 and ##hash ## marks",
    "",
    "   \n\t  ",
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ <<= >>= **kwargs ->",
    "qzxj vbnm zzzzqqq unaffable antidisestablishmentarianism",
]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    found = Tokenizer.from_file(str(STATIC_FOLDER / "tokenizer.json"))
    found.no_truncation()
    found.no_padding()
    return found


def test_ids_match_the_tokenizer_on_awkward_texts(tokenizer):
    ids = TokenIds(tokenizer)
    for text in TEXTS + TEXTS:  # the second pass is served from the caches
        expected = tokenizer.encode(text, add_special_tokens=False).ids
        assert ids.first(text, 10_000) == expected, text
        assert ids.first(text, 7) == expected[:7], text


def test_ids_match_the_tokenizer_on_random_printable_text(tokenizer):
    rng = random.Random(7)
    alphabet = "abcXYZ019_ .()[]#\n\t-é中\x00"
    ids = TokenIds(tokenizer)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert ids.first(text, 512) == tokenizer.encode(text, add_special_tokens=False).ids


def test_static_embedder_vectors_are_unchanged_by_the_cached_ids(tokenizer):
    table = np.random.default_rng(0).standard_normal((tokenizer.get_vocab_size(), 8))
    embedder = StaticEmbedder(table.astype(np.float32))
    vectors = embedder.embed(TEXTS)
    skip = {tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]")}
    for text, vector in zip(TEXTS, vectors, strict=True):
        ids = [
            i
            for i in tokenizer.encode(text[:2048], add_special_tokens=False).ids[:512]
            if i not in skip
        ]
        if not ids:
            assert not vector.any()
            continue
        expected = table.astype(np.float32)[ids].mean(axis=0)
        assert np.array_equal(vector, expected / np.float32(np.linalg.norm(expected)))


def test_a_tokenizer_of_another_kind_is_called_directly(tmp_path: Path):
    from tokenizers import models, pre_tokenizers

    other = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    assert TokenIds(other).first("a b c", 10) == [0, 1, 2]
