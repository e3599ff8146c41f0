"""Chroma imported without its ``@override`` signature checks still works; the checks return."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

PROBE = """
import sys, tempfile
import overrides
from engram.stores.codeindex._chroma_import import import_chromadb

checked = sys.modules["overrides.overrides"].override
chromadb = import_chromadb()
assert overrides.override is checked and overrides.overrides is sys.modules["overrides.overrides"].overrides
from chromadb.api.rust import RustBindingsAPI
assert RustBindingsAPI.start.__override__
client = chromadb.PersistentClient(path=tempfile.mkdtemp())
vectors = client.get_or_create_collection("probe", configuration={"hnsw": {"space": "cosine"}})
vectors.upsert(ids=["a", "b"], embeddings=[[1.0, 0.0], [0.0, 1.0]])
print(vectors.query(query_embeddings=[[1.0, 0.1]], n_results=1)["ids"][0])
"""


def test_chroma_imported_without_override_checks_stores_and_queries():
    # A fresh interpreter: in this one Chroma may already be imported the ordinary way.
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['a']"]
