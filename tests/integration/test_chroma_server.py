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
