"""The code index against a real Chroma server (`chroma run`, shipped with chromadb)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from engram.stores.codeindex import open_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from tests.integration.test_index_backends import small_project
from tests.support.servers import free_port, stop_group, wait_until_ready
from tests.support.state import state_of

pytestmark = pytest.mark.integration

CHROMA = Path(sys.executable).parent / "chroma"
START_TIMEOUT_S = 60


@pytest.fixture()
def chroma_url(tmp_path: Path):
    port = free_port()
    proc = subprocess.Popen(
        [
            str(CHROMA),
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(
            lambda: urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).read(),
            proc,
            "the Chroma server",
            timeout_s=START_TIMEOUT_S,
        )
        yield url
    finally:
        stop_group(proc)


def test_index_and_search_through_a_chroma_server(tmp_path: Path, chroma_url: str):
    root = small_project(tmp_path / "p")
    state = state_of(root)
    index = open_code_index(root, embedder=HashEmbedder(), state=state, chroma_url=chroma_url)
    stats = index.update()
    assert stats.files == 2
    hits = index.search("send email message", mode="dense", k=2)
    assert hits and hits[0].path == "mail.py" and hits[0].source == "dense"
    assert state.path("index", "manifest.sqlite").exists()  # the index is in the state folder
    assert not state.path("index", "chroma").exists()  # but its vectors are on the server
    assert not (root / ".engram").exists()
    # A second project on the same server keeps its own collection.
    other = small_project(tmp_path / "q")
    (other / "mail.py").unlink()
    second = open_code_index(
        other, embedder=HashEmbedder(), state=state_of(other), chroma_url=chroma_url
    )
    second.update()
    assert {h.path for h in second.search("send email message", mode="dense", k=5)} == {"db.py"}


GIT_ID = ["-c", "user.email=dev@example.com", "-c", "user.name=dev"]
TOPICS = ["invoice", "parser", "socket", "cache", "render", "schema", "router", "crypto"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True)


def team_repository(root: Path) -> Path:
    """A repository whose ``main`` has 16 modules and whose ``other`` branch drops half."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for n in range(16):
        topic = TOPICS[n % len(TOPICS)]
        (root / f"mod{n}.py").write_text(
            f'def handle_{topic}_{n}(value):\n    """Handle the {topic} step {n}."""\n'
            f"    return value + {n}\n"
        )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "modules")
    git(root, "checkout", "-q", "-b", "other")
    for n in range(8, 16):
        (root / f"mod{n}.py").unlink()
    (root / "extra.py").write_text("def only_on_the_branch():\n    return 0\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fewer modules")
    git(root, "checkout", "-q", "main")
    return root


def shared_index(root: Path, home: Path, url: str):
    from engram.stores.project import project_identity

    return open_code_index(
        root,
        embedder=HashEmbedder(),
        state=state_of(root, home),
        chroma_url=url,
        project_id=project_identity(root).key,
    )


def dense_paths(index, k: int = 40) -> set[str]:
    return {h.path for h in index.search("handle the step value", mode="dense", k=k)}


def test_two_checkouts_at_one_path_on_other_branches_keep_each_others_vectors(
    tmp_path: Path, chroma_url: str
):
    """A devcontainer and a CI runner: same path, different branches, one shared server."""
    root = team_repository(tmp_path / "repo")
    first = shared_index(root, tmp_path / "home-a", chroma_url)
    assert first.update().new_chunks == 16
    assert len(dense_paths(first)) == 16
    git(root, "checkout", "-q", "other")
    second = shared_index(root, tmp_path / "home-b", chroma_url)
    stats = second.update()
    assert stats.reused == 8 and stats.new_chunks == 1  # only extra.py was embedded
    assert dense_paths(second) == {f"mod{n}.py" for n in range(8)} | {"extra.py"}
    git(root, "checkout", "-q", "main")
    # The first checkout lost nothing: every vector it uses is still on the server.
    assert first.missing_vectors() == 0
    assert len(dense_paths(first)) == 16
    # Even the second checkout's own run back on main finds every vector there already.
    again = second.update()
    assert again.new_chunks == 0 and again.reused == 8 and second.missing_vectors() == 0
    first.close()
    second.close()


def test_a_teammates_clone_at_another_path_reuses_the_servers_vectors(
    tmp_path: Path, chroma_url: str
):
    origin = team_repository(tmp_path / "origin")
    mine = shared_index(origin, tmp_path / "me", chroma_url)
    mine.update()
    clone = tmp_path / "teammate" / "work" / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    theirs = shared_index(clone, tmp_path / "teammate-home", chroma_url)
    stats = theirs.update()
    assert stats.chunks == 16 and stats.reused == 16 and stats.embedded == 0
    assert dense_paths(theirs) == dense_paths(mine)
    mine.close()
    theirs.close()


def test_gc_removes_only_what_no_live_checkout_uses(tmp_path: Path, chroma_url: str):
    import time

    from engram.stores.codeindex._shared_vectors import LEASE_DAYS

    root = team_repository(tmp_path / "repo")
    first = shared_index(root, tmp_path / "home-a", chroma_url)
    first.update()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "other", str(root), str(clone))
    second = shared_index(clone, tmp_path / "home-b", chroma_url)
    second.update()
    # Nothing is unused while both checkouts hold leases: mod8..15 belong to the first.
    report = second.collect_garbage()
    assert report is not None and report.removed == 0 and report.leases == 2
    assert report.vectors == 17
    # The first checkout drops half its modules; the vectors stay for nobody until --gc.
    for n in range(12, 16):
        (root / f"mod{n}.py").unlink()
    first.update()
    report = second.collect_garbage()
    assert report is not None and report.removed == 4 and report.kept == 13
    assert first.missing_vectors() == 0 and second.missing_vectors() == 0
    # A lease older than LEASE_DAYS keeps nothing: its checkout re-embeds at its next run.
    assert isinstance(second.vectors, type(first.vectors))
    late = time.time() + (LEASE_DAYS + 1) * 86400
    report = second.vectors.gc(now=late)  # type: ignore[attr-defined]
    assert report.expired_leases >= 1 and first.missing_vectors() > 0
    assert len(dense_paths(first)) < 12  # an honest, smaller answer: nothing made up
    repaired = first.update()
    assert repaired.new_chunks > 0 and first.missing_vectors() == 0
    assert len(dense_paths(first)) == 12
    first.close()
    second.close()
