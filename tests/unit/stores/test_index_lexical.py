"""BM25 segments: small changes rebuild only the delta, large ones the base."""

from __future__ import annotations

import json

from engram.stores.codeindex import ProjectCodeIndex
from engram.stores.codeindex._manifest import Manifest
from engram.stores.codeindex._vectors import InMemoryVectors
from engram.stores.embeddings._embedders import HashEmbedder


def generation_of(folder):
    return json.loads((folder / "ids.json").read_text())["generation"]


def make(root, tmp_path):
    return ProjectCodeIndex(
        root,
        embedder=HashEmbedder(),
        manifest=Manifest.open(tmp_path / "manifest.sqlite"),
        vectors=InMemoryVectors(),
        bm25_dir=tmp_path / "bm25",
    )


def test_small_change_updates_delta_only_and_masks_removed_chunks(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(30):
        body = "\n\n".join(f"def task_{i}_{j}(x):\n    return x + {j}" for j in range(5))
        (root / f"m{i}.py").write_text(body + "\n")
    index = make(root, tmp_path)
    index.update()
    bm25 = tmp_path / "bm25"
    assert generation_of(bm25 / "base") == generation_of(bm25 / "delta") == 1
    (root / "m3.py").write_text("def fresh_helper(y):\n    return y\n")
    index.update()
    assert generation_of(bm25 / "base") == 1 and generation_of(bm25 / "delta") == 2
    assert [h.path for h in index.search("fresh_helper", mode="bm25", k=3)] == ["m3.py"]
    found = index.search("task_3_2", mode="bm25", k=200)
    assert found and all(h.symbol != "task_3_2(x)" for h in found)
    assert index.search("task_4_2", mode="bm25", k=1)[0].symbol == "task_4_2(x)"
    reopened = make(root, tmp_path)
    assert [h.path for h in reopened.search("fresh_helper", mode="bm25", k=1)] == ["m3.py"]


def test_large_change_rebuilds_the_base(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(4):
        (root / f"m{i}.py").write_text(f"def old_{i}():\n    return {i}\n")
    index = make(root, tmp_path)
    index.update()
    for i in range(4):
        (root / f"m{i}.py").write_text(f"def new_{i}():\n    return {i}\n")
    index.update()
    assert generation_of(tmp_path / "bm25" / "base") == 2
    assert index.search("new_2", mode="bm25", k=1)[0].path == "m2.py"
