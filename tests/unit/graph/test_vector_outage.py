"""A Chroma server that is down takes only the dense ranking away (graph.retrieval)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.graph.retrieval import vector_outage
from engram.graph.retrieval._vector_outage import ServerVectors, UnreachableVectors
from engram.stores import BackendUnavailableError
from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder

SERVER = "http://engram:chroma-pw-1234@chroma.internal:8000"


def _index(root: Path):
    (root / "mail.py").write_text("def send_email(message):\n    return message\n")
    (root / "db.py").write_text("def query_db(sql):\n    return sql\n")
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    return index


class DeadServer:
    """Vectors whose server went away after they were opened."""

    def query(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        raise ConnectionRefusedError(111, "Connection refused")

    def upsert(self, ids, vectors) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    def delete(self, ids) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    def ids(self) -> set[str]:
        raise ConnectionRefusedError(111, "Connection refused")


def test_an_unreachable_server_leaves_exact_and_bm25_search_with_a_note(tmp_path):
    index = _index(tmp_path)
    index.vectors = UnreachableVectors(SERVER, f"cannot reach Chroma at {SERVER}: refused")
    hits = index.search("send_email message", mode="hybrid", k=2)
    assert hits and hits[0].path == "mail.py"
    files = index.search_files("send_email message", k=2)
    assert files and files[0].path == "mail.py"
    note = vector_outage(index)
    assert "the Chroma server at http://engram:***@chroma.internal:8000 cannot be reached" in note
    assert "exact and BM25 matches only" in note and "chroma-pw-1234" not in note
    with pytest.raises(BackendUnavailableError):  # an update cannot lose vectors silently
        index.vectors.upsert(["x"], np.zeros((1, 4), dtype=np.float32))


def test_a_server_lost_after_opening_ranks_nothing_and_says_so(tmp_path):
    index = _index(tmp_path)
    assert vector_outage(index) == ""
    index.vectors = ServerVectors(DeadServer(), SERVER)
    hits = index.search("send_email message", mode="hybrid", k=2)
    assert hits and hits[0].path == "mail.py"
    assert "Connection refused" in vector_outage(index)
    assert "chroma-pw-1234" not in vector_outage(index)


def test_a_long_lived_process_opens_a_degraded_index_again(tmp_path, monkeypatch):
    """Chat and the MCP server keep their Deps for hours: the server may be back by then."""
    from engram.graph import Context, Deps
    from engram.graph import _deps as deps_module

    opened = []

    def opener(context):
        index = _index(tmp_path) if not opened else opened[0]
        index.degraded = len(opened) == 0  # the first open met a server that was down
        opened.append(index)
        return index

    clock = [1000.0]
    monkeypatch.setattr(deps_module.time, "monotonic", lambda: clock[0])
    deps = Deps(open_code_index=opener)
    context = Context(project=str(tmp_path))
    first = deps.code_index(context)
    assert first is not None and first.degraded and len(opened) == 1
    clock[0] += deps_module.FAILED_OPEN_RETRY_S - 1
    assert deps.code_index(context) is first and len(opened) == 1  # not yet
    clock[0] += 2
    again = deps.code_index(context)
    assert len(opened) == 2 and again is not None and not again.degraded
    clock[0] += 10 * deps_module.FAILED_OPEN_RETRY_S
    assert deps.code_index(context) is again and len(opened) == 2  # a whole index stays
