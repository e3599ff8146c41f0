"""Graph persistence contract (in-memory and file stores), validation and incremental update."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.stores import IndexCorruptError, IndexNotBuiltError
from engram.stores.relations import (
    GRAPH_FILE,
    RelationIndex,
    graph_store_for,
    open_relation_index,
    update_relation_index,
)
from engram.stores.relations._index import build_relation_index
from engram.stores.relations._persistence import FileGraphStore, InMemoryGraphStore
from tests.support.state import state_of

FILES = {
    "app/models.py": "class Base:\n    def save(self):\n        pass\n\nclass User(Base):\n    pass\n",
    "app/service.py": (
        "from app.models import User\n\n"
        "def create():\n    user = User()\n    user.save()\n    return missing()\n"
    ),
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def snapshot(graph: RelationIndex) -> tuple[set, set, set]:
    nodes = {(n, tuple(sorted(a.items()))) for n, a in graph.graph.nodes(data=True)}
    edges = set(graph.graph.edges(keys=True))
    unresolved = {u for e in graph.edges.values() for u in e.unresolved}
    return nodes, edges, unresolved


@pytest.fixture(params=["memory", "file"])
def store(request, tmp_path):
    if request.param == "memory":
        return InMemoryGraphStore()
    return FileGraphStore(tmp_path / "store" / "graph.jsonl")


def test_store_contract_round_trip(store, tmp_path):
    assert store.load() is None
    write(tmp_path / "p", FILES)
    graph = RelationIndex()
    build_relation_index(tmp_path / "p", graph)
    store.save(graph)
    loaded = store.load()
    assert loaded is not None
    assert snapshot(loaded) == snapshot(graph)
    store.save(RelationIndex())
    again = store.load()
    assert again is not None and again.graph.number_of_nodes() == 0


def test_file_store_reports_a_corrupt_file(tmp_path):
    path = tmp_path / "graph.jsonl"
    path.write_bytes(b"not a pickle")
    with pytest.raises(IndexCorruptError):
        FileGraphStore(path).load()


def test_open_code_graph_without_build_raises_not_built(tmp_path):
    with pytest.raises(IndexNotBuiltError) as info:
        open_relation_index(tmp_path, state_of(tmp_path))
    assert "engram index" in info.value.hint


def test_update_persists_next_to_the_index_and_skips_unchanged(tmp_path):
    write(tmp_path, FILES)
    first = update_relation_index(tmp_path, state_of(tmp_path))
    assert state_of(tmp_path).path(*GRAPH_FILE.parts).exists()
    assert first.parsed == 2 and first.files == 2
    second = update_relation_index(tmp_path, state_of(tmp_path))
    assert second.parsed == 0 and second.resolved == 0
    assert snapshot(open_relation_index(tmp_path, state_of(tmp_path))) == snapshot(
        open_relation_index(tmp_path, state_of(tmp_path))
    )


def test_incremental_update_equals_a_fresh_build(tmp_path):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    write(
        tmp_path,
        {
            "app/models.py": "class Base:\n    def save(self):\n        pass\n\n"
            "class User(Base):\n    def save(self):\n        super().save()\n",
            "app/extra.py": "def missing():\n    return 1\n",
        },
    )
    later = os.stat(tmp_path / "app/models.py").st_mtime_ns + 1_000_000
    os.utime(tmp_path / "app/models.py", ns=(later, later))
    write(
        tmp_path,
        {
            "app/service.py": FILES["app/service.py"].replace(
                "from app.models import User",
                "from app.models import User\nfrom app.extra import missing",
            )
        },
    )
    stats = update_relation_index(tmp_path, state_of(tmp_path))
    assert stats.parsed == 3
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(open_relation_index(tmp_path, state_of(tmp_path))) == snapshot(fresh)
    edges = set(fresh.graph.edges(keys=True))
    assert ("app/service.py::create", "app/models.py::User.save", "calls") in edges
    assert ("app/service.py::create", "app/extra.py::missing", "calls") in edges


def test_one_changed_file_reresolves_its_dependents_only(tmp_path):
    write(tmp_path, {**FILES, "app/other.py": "def alone():\n    return 2\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    write(tmp_path, {"app/models.py": FILES["app/models.py"].replace("def save", "def store")})
    stats = update_relation_index(tmp_path, state_of(tmp_path))
    assert stats.parsed == 1
    assert stats.resolved == 2  # models.py itself and service.py, which calls into it
    graph = open_relation_index(tmp_path, state_of(tmp_path))
    assert ("user.save", "calls") in graph.unresolved("app/service.py::create")
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(graph) == snapshot(fresh)


def test_deleted_file_leaves_no_nodes_or_edges(tmp_path):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    (tmp_path / "app/models.py").unlink()
    stats = update_relation_index(tmp_path, state_of(tmp_path))
    graph = open_relation_index(tmp_path, state_of(tmp_path))
    assert stats.removed == 1
    assert not any(n.startswith("app/models.py") for n in graph.graph.nodes)
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(graph) == snapshot(fresh)


def test_update_rebuilds_an_unreadable_or_old_graph(tmp_path):
    write(tmp_path, FILES)
    state_of(tmp_path).path(*GRAPH_FILE.parts).parent.mkdir(parents=True)
    state_of(tmp_path).path(*GRAPH_FILE.parts).write_bytes(b"\x80\x05garbage")
    stats = update_relation_index(tmp_path, state_of(tmp_path))
    assert stats.parsed == 2
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(open_relation_index(tmp_path, state_of(tmp_path))) == snapshot(fresh)


def test_small_update_writes_a_delta_and_leaves_the_full_file(tmp_path):
    write(tmp_path, {**FILES, "app/other.py": "def alone():\n    return 2\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    full = state_of(tmp_path).path(*GRAPH_FILE.parts)
    before = full.read_bytes()
    store = FileGraphStore(full)
    write(tmp_path, {"app/models.py": FILES["app/models.py"].replace("def save", "def store")})
    update_relation_index(tmp_path, state_of(tmp_path))
    (tmp_path / "app/other.py").unlink()
    write(tmp_path, {"app/new.py": "from app.models import Base\n\nclass Child(Base):\n    pass\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    assert full.read_bytes() == before
    assert store.delta_path.exists()
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    loaded = open_relation_index(tmp_path, state_of(tmp_path))
    assert snapshot(loaded) == snapshot(fresh)
    assert loaded.stats == fresh.stats
    assert update_relation_index(tmp_path, state_of(tmp_path)).parsed == 0


def test_large_update_rewrites_the_full_file_and_drops_the_delta(tmp_path, monkeypatch):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    store = FileGraphStore(state_of(tmp_path).path(*GRAPH_FILE.parts))
    write(tmp_path, {"app/extra.py": "def missing():\n    return 1\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    assert store.delta_path.exists()
    monkeypatch.setattr("engram.stores.relations._persistence.DELTA_MAX_FILES", 0)
    write(tmp_path, {"app/more.py": "def more():\n    return missing()\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    assert not store.delta_path.exists()
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(open_relation_index(tmp_path, state_of(tmp_path))) == snapshot(fresh)


def test_a_delta_left_by_a_crash_during_a_full_rewrite_is_ignored(tmp_path):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    store = FileGraphStore(state_of(tmp_path).path(*GRAPH_FILE.parts))
    write(tmp_path, {"app/extra.py": "def missing():\n    return 1\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    stale = store.delta_path.read_bytes()  # applies to the first full file only
    (tmp_path / "app/extra.py").unlink()
    graph = store.load()
    assert graph is not None and "app/extra.py" in graph.facts
    build_relation_index(tmp_path, graph)
    graph._base_id = ""  # force a full rewrite
    store.save(graph)
    assert not store.delta_path.exists()
    store.delta_path.write_bytes(stale)  # as if the process died before removing it
    loaded = store.load()
    assert loaded is not None and "app/extra.py" not in loaded.facts
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(loaded) == snapshot(fresh)
    assert update_relation_index(tmp_path, state_of(tmp_path)).parsed == 0


def test_a_corrupt_delta_is_reported(tmp_path):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    store = FileGraphStore(state_of(tmp_path).path(*GRAPH_FILE.parts))
    store.delta_path.write_bytes(b"\x80\x05garbage")
    with pytest.raises(IndexCorruptError):
        store.load()


class _Planted:
    """A pickle payload that runs a command when loaded (the classic pickle exploit)."""

    def __reduce__(self):
        return (os.system, ("touch planted-by-pickle",))


@pytest.mark.parametrize("name", ["graph.jsonl", "graph.delta.jsonl"])
def test_a_planted_pickle_is_never_run(tmp_path, monkeypatch, name):
    import pickle

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "p", FILES)
    graph = RelationIndex()
    build_relation_index(tmp_path / "p", graph)
    store = FileGraphStore(tmp_path / "graph.jsonl")
    store.save(graph)
    (tmp_path / name).write_bytes(pickle.dumps({"version": 5, "x": _Planted()}))
    with pytest.raises(IndexCorruptError):
        store.load()
    assert not (tmp_path / "planted-by-pickle").exists()


@pytest.mark.parametrize(
    "mangle",
    [
        lambda text: text.replace('"version":5', '"version":4'),
        lambda text: text.replace(
            '["F","app/models.py",["python"', '["F","app/models.py",["python",1'
        ),
        lambda text: text.replace('"calls"', '"__reduce__"'),
        lambda text: text.replace('"class"', '"os.system"'),
        lambda text: text[: len(text) // 2],
        lambda text: text.replace("[", "[" * 5000, 1),
        lambda text: "\n".join(text.splitlines()[:1]),
    ],
    ids=["version", "field", "relation", "kind", "truncated", "deep", "no-table"],
)
def test_malformed_graph_files_are_reported_not_trusted(tmp_path, mangle):
    write(tmp_path / "p", FILES)
    graph = RelationIndex()
    build_relation_index(tmp_path / "p", graph)
    store = FileGraphStore(tmp_path / "graph.jsonl")
    store.save(graph)
    text = (tmp_path / "graph.jsonl").read_text(encoding="utf-8")
    mangled = mangle(text)
    assert mangled != text
    (tmp_path / "graph.jsonl").write_text(mangled, encoding="utf-8")
    with pytest.raises(IndexCorruptError):
        store.load()


def test_a_graph_folder_not_stamped_for_this_project_is_rebuilt_not_read(tmp_path):
    write(tmp_path / "a", FILES)
    write(tmp_path / "b", FILES)
    update_relation_index(tmp_path / "a", state_of(tmp_path / "a"))
    import shutil

    state_of(tmp_path / "b").make()
    shutil.copytree(state_of(tmp_path / "a").path("index"), state_of(tmp_path / "b").path("index"))
    with pytest.raises(IndexCorruptError, match="not written here"):
        graph_store_for(tmp_path / "b", state_of(tmp_path / "b")).load()
    stats = update_relation_index(tmp_path / "b", state_of(tmp_path / "b"))
    assert stats.parsed == 2
    assert graph_store_for(tmp_path / "b", state_of(tmp_path / "b")).load() is not None
    assert update_relation_index(tmp_path / "b", state_of(tmp_path / "b")).parsed == 0


def test_a_loaded_graph_builds_its_relation_graph_only_when_asked(tmp_path, monkeypatch):
    write(tmp_path, {**FILES, "app/other.py": "def alone():\n    return 2\n"})
    update_relation_index(tmp_path, state_of(tmp_path))
    write(tmp_path, {"app/models.py": FILES["app/models.py"].replace("def save", "def store")})
    update_relation_index(
        tmp_path, state_of(tmp_path)
    )  # leaves a delta, applied to the facts on load
    loaded = open_relation_index(tmp_path, state_of(tmp_path))
    assert not loaded.has_relation_graph()
    with monkeypatch.context() as patched:  # nothing changed: counted from the facts, never built
        patched.setattr("engram.stores.relations._model.relation_graph", _never_built)
        noop = update_relation_index(tmp_path, state_of(tmp_path))
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert (noop.nodes, noop.edges) == (
        fresh.graph.number_of_nodes(),
        fresh.graph.number_of_edges(),
    )
    assert snapshot(loaded) == snapshot(fresh) and loaded.has_relation_graph()


def _never_built(*args: object) -> None:
    raise AssertionError("the relation graph was built")


def test_an_update_keeps_a_built_relation_graph_current(tmp_path):
    write(tmp_path, FILES)
    update_relation_index(tmp_path, state_of(tmp_path))
    graph = open_relation_index(tmp_path, state_of(tmp_path))
    graph.warm()
    write(tmp_path, {"app/models.py": FILES["app/models.py"].replace("def save", "def store")})
    build_relation_index(tmp_path, graph)
    fresh = RelationIndex()
    build_relation_index(tmp_path, fresh)
    assert snapshot(graph) == snapshot(fresh)


def test_a_loaded_graph_shares_names_and_edge_data_and_equals_the_built_one(tmp_path):
    """Loading keeps one object per distinct name and one attribute dict per relation."""
    write(tmp_path, FILES)
    built = RelationIndex()
    build_relation_index(tmp_path, built)
    update_relation_index(tmp_path, state_of(tmp_path))
    loaded = open_relation_index(tmp_path, state_of(tmp_path))
    assert loaded.facts == built.facts and loaded.edges == built.edges
    assert snapshot(loaded) == snapshot(built)
    sources = [src for e in loaded.edges.values() for src, _, _ in e.edges]
    assert len({id(s) for s in sources}) == len(set(sources)) < len(sources)
    data = [d for *_, d in loaded.graph.edges(keys=True, data=True)]
    assert all(d == {"relation": key} for *_, key, d in loaded.graph.edges(keys=True, data=True))
    assert len({id(d) for d in data}) == len({d["relation"] for d in data}) < len(data)
