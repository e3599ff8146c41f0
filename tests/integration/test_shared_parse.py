"""One parse per file: the relation index built from the chunker's trees equals one built alone."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder
from engram.stores.relations import RelationIndex, SharedFacts, _extraction, _index
from engram.stores.relations._index import build_relation_index

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "graph"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Every language of the graph fixtures in one project, plus a file no walker reads."""
    root = tmp_path / "proj"
    for language in sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()):
        shutil.copytree(FIXTURES / language, root / language, ignore=_no_expectations)
    (root / "README.md").write_text("Notes about the fixture project.\n", encoding="utf-8")
    return root


def _no_expectations(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "edges.json"]


def snapshot(graph: RelationIndex) -> tuple[set, set, set]:
    nodes = {(n, tuple(sorted(a.items()))) for n, a in graph.graph.nodes(data=True)}
    edges = set(graph.graph.edges(keys=True))
    unresolved = {u for e in graph.edges.values() for u in e.unresolved}
    return nodes, edges, unresolved


def chunking_pass(root: Path) -> SharedFacts:
    """Run the code index over ``root`` as ``engram index`` does, keeping the trees' facts."""
    shared = SharedFacts()
    index = open_memory_code_index(root, embedder=HashEmbedder())
    try:
        index.update(on_tree=shared.record)
    finally:
        index.close()
    return shared


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the files the relation index parses itself."""
    calls: Counter[str] = Counter()
    real = _extraction.extract_file

    def counting(path: str, source: bytes, language: str):
        calls[path] += 1
        return real(path, source, language)

    monkeypatch.setattr(_index, "extract_file", counting)
    return calls


def test_shared_facts_build_the_same_relation_index_without_parsing_again(project, extracted):
    alone = RelationIndex()
    build_relation_index(project, alone)
    parsed_alone = sum(extracted.values())
    extracted.clear()

    shared = chunking_pass(project)
    assert len(shared) == parsed_alone > 10  # every file of the five languages, not README
    together = RelationIndex()
    stats = build_relation_index(project, together, shared=shared)

    assert not extracted  # every file came from the chunker's parse
    assert len(shared) == 0  # taken, not kept after use
    assert stats.parsed == parsed_alone
    assert together.facts == alone.facts
    assert snapshot(together) == snapshot(alone)
    assert together.graph.number_of_edges() > 0


def test_a_file_changed_between_the_passes_is_parsed_again(project, extracted):
    target = project / "python" / "changed_later.py"
    target.write_text("def before_the_change():\n    return 1\n", encoding="utf-8")
    shared = chunking_pass(project)  # records the file as it was
    target.write_text("def after_the_change():\n    return before()\n", encoding="utf-8")

    together = RelationIndex()
    build_relation_index(project, together, shared=shared)
    assert extracted == Counter({"python/changed_later.py": 1})
    alone = RelationIndex()
    build_relation_index(project, alone)

    names = {n for n in together.graph.nodes if n.startswith("python/changed_later.py::")}
    assert names == {"python/changed_later.py::after_the_change"}
    assert snapshot(together) == snapshot(alone)


def test_facts_of_other_bytes_are_never_taken(project, extracted):
    """A file that is not valid UTF-8 reached the chunker re-encoded: the relation index parses
    the bytes on disk itself."""
    odd = project / "python" / "latin1.py"
    odd.write_bytes(b"# caf\xe9\ndef helper():\n    return 1\n")
    shared = chunking_pass(project)
    extracted.clear()

    together = RelationIndex()
    build_relation_index(project, together, shared=shared)
    alone = RelationIndex()
    build_relation_index(project, alone)

    assert extracted["python/latin1.py"] == 2  # once with the shared facts, once alone
    assert sum(extracted.values()) == 1 + len(alone.facts)
    assert together.facts == alone.facts
    assert snapshot(together) == snapshot(alone)
