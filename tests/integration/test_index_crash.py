"""Killing `engram index` at any point and re-running it leaves a correct index."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.stores.codeindex import open_code_index
from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from tests.support.state import state_of

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]

SLOW_INDEXER = """
import sys, time, pathlib
import engram.stores.codeindex._incremental as update
update.EMBED_BATCH_CHUNKS = 4
from engram.stores.codeindex._index import open_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from engram.stores.project._state import ProjectState
root, marker = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
state = ProjectState(root.resolve(), pathlib.Path(sys.argv[3]).resolve())
def progress(event):
    if event.phase == "embed":
        marker.write_text(str(event.done))
        time.sleep(0.05)
open_code_index(root, embedder=HashEmbedder(), state=state).update(progress)
"""


def make_project(root: Path, files: int = 12) -> None:
    for i in range(files):
        body = "\n\n".join(f"def step_{i}_{j}(value):\n    return value * {j}" for j in range(5))
        (root / f"mod_{i}.py").write_text(f'"""Module {i}."""\n\n{body}\n')


def kill_after(root: Path, marker: Path, embedded: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_INDEXER, str(root), str(marker), str(state_of(root).home)],
        env=env,
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if marker.exists() and marker.read_text() and int(marker.read_text()) >= embedded:
            break
        if proc.poll() is not None:
            pytest.fail(f"indexer ended before the kill point (rc={proc.returncode})")
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def assert_matches_fresh_index(root: Path) -> None:
    index = open_code_index(root, embedder=HashEmbedder(), state=state_of(root))
    stats = index.update()
    fresh = open_memory_code_index(root, embedder=HashEmbedder())
    fresh.update()
    expected = fresh.manifest.chunk_ids()
    assert index.manifest.chunk_ids() == expected
    assert index.vectors.ids() == expected
    assert set(index.manifest.files()) == set(fresh.manifest.files())
    assert stats.chunks == len(expected)
    for mode in ("bm25", "dense", "hybrid"):
        got = [(h.path, h.symbol) for h in index.search("step_3_2 value", mode=mode, k=5)]
        want = [(h.path, h.symbol) for h in fresh.search("step_3_2 value", mode=mode, k=5)]
        assert got == want, mode
    index.close()


@pytest.mark.parametrize("embedded", [4, 24])
def test_kill_during_first_index_then_rerun(tmp_path, embedded):
    root = tmp_path / "proj"
    root.mkdir()
    make_project(root)
    kill_after(root, tmp_path / "marker", embedded)
    assert_matches_fresh_index(root)


def test_kill_during_reindex_after_changes_then_rerun(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    make_project(root)
    open_code_index(root, embedder=HashEmbedder(), state=state_of(root)).update()
    for i in range(6):
        (root / f"mod_{i}.py").write_text(f"def renamed_{i}(x):\n    return x - {i}\n")
    (root / "mod_11.py").unlink()
    kill_after(root, tmp_path / "marker", 1)
    (root / "mod_7.py").write_text("def late_change(y):\n    return y\n")
    assert_matches_fresh_index(root)
    hits = open_code_index(root, embedder=HashEmbedder(), state=state_of(root)).search(
        "late_change", k=1
    )
    assert hits[0].path == "mod_7.py"


def test_stale_bm25_generation_is_rebuilt(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    make_project(root, files=3)
    index = open_code_index(root, embedder=HashEmbedder(), state=state_of(root))
    index.update()
    (root / "mod_0.py").write_text("def brand_new_name():\n    return 0\n")
    index.manifest.set_meta("generation", "99")  # as if BM25 writing had been interrupted
    reopened = open_code_index(root, embedder=HashEmbedder(), state=state_of(root))
    assert reopened.search("brand_new_name", mode="bm25", k=1) == []  # manifest not updated yet
    reopened.update()
    assert reopened.search("brand_new_name", mode="bm25", k=1)[0].path == "mod_0.py"
