"""Preloading retrieval resources: each is opened and warmed once; failures become notes."""

from __future__ import annotations

from engram.graph import Context, Deps
from engram.graph.retrieval import preload
from engram.graph.retrieval._preload import PRELOAD_MODES
from engram.stores import IndexNotBuiltError


class FakeIndex:
    def __init__(self):
        self.modes = []

    def is_built(self):
        return True

    def search(self, query, *, mode, k):
        self.modes.append(mode)
        return []

    def file_table(self):
        self.modes.append("file_table")


class FakeGraph:
    warmed = 0

    def warm(self):
        self.warmed += 1


def test_preload_opens_and_warms_each_resource(tmp_path):
    index, graph = FakeIndex(), FakeGraph()
    opened = []

    def open_index(context):
        opened.append("index")
        return index

    deps = Deps(open_code_index=open_index, open_relation_index=lambda _: graph)
    context = Context(project=str(tmp_path))
    assert preload(deps, context) == []
    assert index.modes == [*PRELOAD_MODES, "file_table"] and graph.warmed == 1
    assert deps.code_index(context) is index and opened == ["index"]


def test_missing_resources_become_notes(tmp_path):
    def missing(_):
        raise IndexNotBuiltError("no code index", hint="run `engram index`")

    notes = preload(Deps(open_code_index=missing), Context(project=str(tmp_path)))
    assert notes == ["code_index: no code index"]
