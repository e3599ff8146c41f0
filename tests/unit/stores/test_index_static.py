from __future__ import annotations

from pathlib import Path

import numpy as np

from engram.stores.embeddings import static_embedder as index_static
from engram.stores.embeddings.static_embedder import (
    STATIC_MODEL_ID,
    distill_static_table,
    load_or_build_static_table,
    save_static_table,
)


def test_distillation_is_deterministic_on_a_slice_of_the_bundled_model():
    first = distill_static_table(vocab_limit=256)
    second = distill_static_table(vocab_limit=256)
    assert first.dtype == np.float32 and first.shape[0] == 256
    assert np.array_equal(first, second)


def test_saved_table_is_found_in_home_then_in_the_shared_folder(tmp_path: Path, monkeypatch):
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    shared = tmp_path / "shared"
    save_static_table(shared, table)
    assert not list(shared.glob("*.tmp"))
    monkeypatch.setattr(index_static, "distill_static_table", _must_not_distill)
    loaded = load_or_build_static_table(tmp_path / "home", shared=shared)
    assert np.array_equal(loaded, table)
    mine = table * 2
    save_static_table(tmp_path / "home" / "models", mine)
    assert np.array_equal(load_or_build_static_table(tmp_path / "home", shared=shared), mine)


def test_missing_table_is_built_into_home(tmp_path: Path, monkeypatch):
    table = np.ones((2, 3), dtype=np.float32)
    monkeypatch.setattr(index_static, "distill_static_table", lambda progress=None: table)
    built = load_or_build_static_table(tmp_path / "home", shared=tmp_path / "none")
    assert np.array_equal(built, table)
    assert (tmp_path / "home" / "models" / f"{STATIC_MODEL_ID}.npy").exists()


def _must_not_distill(*args, **kwargs):
    raise AssertionError("the saved table should have been used")
