"""update_index with a caller's walk, and the manifest-trusting walk it uses by default."""

from __future__ import annotations

from pathlib import Path

import pytest

import engram.stores.files._walk as walk_module
from engram.stores.codeindex import walk_for_index
from engram.stores.codeindex._incremental import update_index
from engram.stores.codeindex._manifest import Manifest
from engram.stores.codeindex._vectors import InMemoryVectors
from engram.stores.embeddings._embedders import HashEmbedder


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def parts():
    return {
        "manifest": Manifest.open(None),
        "vectors": InMemoryVectors(),
        "embedder": HashEmbedder(),
        "bm25_dir": None,
    }


def test_a_given_walk_is_what_gets_indexed(tmp_path, parts):
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n"})
    walk = walk_for_index(tmp_path, parts["manifest"])
    write(tmp_path, {"b.py": "def beta():\n    return 2\n"})  # after the walk
    stats, _ = update_index(tmp_path, walk=walk, **parts)
    assert set(parts["manifest"].files()) == {"a.py"}
    assert stats.parsed_files == 1
    stats, _ = update_index(tmp_path, **parts)
    assert set(parts["manifest"].files()) == {"a.py", "b.py"}
    assert stats.parsed_files == 1


def test_default_walk_reads_only_new_or_changed_files_for_the_binary_check(
    tmp_path, parts, monkeypatch
):
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    pass\n"})
    update_index(tmp_path, **parts)
    sniffed: list[str] = []
    real = walk_module._is_binary

    def spy(path: str) -> bool:
        sniffed.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(walk_module, "_is_binary", spy)
    write(tmp_path, {"c.py": "def gamma():\n    return 3\n"})
    (tmp_path / "b.py").write_bytes(b"\x00\x01binary now\n")
    stats, _ = update_index(tmp_path, **parts)
    assert sorted(sniffed) == ["b.py", "c.py"]
    assert set(parts["manifest"].files()) == {"a.py", "c.py"}
    assert stats.deleted_files == 1
