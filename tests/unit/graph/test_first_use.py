"""First-use indexing in a graph's runs: one background build per project, never opened twice.

The build itself is stood in for (``update_indexes``, the real one is run by
tests/integration/test_auto_index.py and test_langgraph_dev.py); the bookkeeping around it, the
notes and ``Deps``' guard are the real ones.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import engram.graph.retrieval._index_build as index_build
from engram.graph import ConfigError, Context, Deps
from engram.graph.retrieval import BackgroundIndexing
from engram.graph.tools._search_code import BUILDING_NOTE, NO_INDEX_NOTE, search_code_hits
from engram.stores import IndexNotBuiltError, StoreError

pytestmark = pytest.mark.usefixtures("python_grep")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (root / "report.py").write_text("def header(t):\n    return t\n", encoding="utf-8")
    return root


class HeldBuild:
    """``update_indexes`` that waits until the test lets it end (or fail)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.release = threading.Event()
        self.calls: list[int] = []
        self.error = error

    def __call__(self, context, *, walk=None, **_):  # noqa: ANN001, ANN204
        self.calls.append(len(walk.files))
        self.release.wait(10)
        if self.error is not None:
            raise self.error
        stats = SimpleNamespace(files=len(walk.files), chunks=2)
        return SimpleNamespace(stats=stats, summary={"seconds_total": 0.1})


def _deps(opened: list[str]) -> Deps:
    def opener(context: Context) -> object:
        opened.append(context.project)
        raise IndexNotBuiltError(f"no code index in {context.project}")

    return Deps(open_code_index=opener, first_use=BackgroundIndexing())


def _finish(deps: Deps, root: Path, build: HeldBuild) -> None:
    build.release.set()
    attempt = deps.first_use._attempts[root]
    assert attempt.thread is not None
    attempt.thread.join(10)
    assert not deps.first_use.running(root)


def test_one_build_starts_and_the_index_is_not_opened_while_it_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "on")
    build = HeldBuild()
    monkeypatch.setattr(index_build, "update_indexes", build)
    opened: list[str] = []
    deps = _deps(opened)
    context = Context(project=str(project))
    with pytest.raises(IndexNotBuiltError):
        deps.code_index(context)
    assert len(opened) == 1

    note = deps.index_on_first_use(context)
    assert note.startswith("no code index yet: indexing its 2 files in the background")
    assert deps.first_use.running(project)
    assert deps.index_on_first_use(context) == (
        "no code index yet: it is being built in the background"
    )
    with pytest.raises(IndexNotBuiltError, match="being built in the background"):
        deps.code_index(context)
    assert len(opened) == 1  # not opened (nor its remembered failure raised) while it builds
    hits, tool_note = search_code_hits(context, deps, "add")
    assert tool_note == BUILDING_NOTE and [h.path for h in hits] == ["calc.py"]

    _finish(deps, project, build)
    assert build.calls == [2]
    with pytest.raises(IndexNotBuiltError):  # the stand-in built nothing: opened again
        deps.code_index(context)
    assert len(opened) == 2  # the failure remembered before the build was forgotten
    assert search_code_hits(context, deps, "add")[1] == NO_INDEX_NOTE


def test_a_failed_build_is_a_note_kept_for_a_while(project: Path, monkeypatch):
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "on")
    build = HeldBuild(StoreError("chroma server http://u:hunter2@db:8000 refused"))
    monkeypatch.setattr(index_build, "update_indexes", build)
    deps = _deps([])
    context = Context(project=str(project))
    deps.index_on_first_use(context)
    _finish(deps, project, build)
    note = deps.index_on_first_use(context)
    assert note.startswith("the code index could not be built on first use (chroma server")
    assert "hunter2" not in note and "run `engram index`" in note
    assert build.calls == [2]  # not tried again at once


def test_a_project_over_the_limit_is_not_built(project: Path, monkeypatch):
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "1")
    build = HeldBuild()
    monkeypatch.setattr(index_build, "update_indexes", build)
    deps = _deps([])
    note = deps.index_on_first_use(Context(project=str(project)))
    assert "this project has more files than is indexed on first use" in note
    assert not deps.first_use.running(project) and build.calls == []


def test_off_no_opener_and_a_bad_limit(project: Path, monkeypatch):
    context = Context(project=str(project))
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "off")
    assert _deps([]).index_on_first_use(context) == ""
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "on")
    assert Deps(first_use=BackgroundIndexing()).index_on_first_use(context) == ""
    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "lots")
    with pytest.raises(ConfigError, match="neither off nor a number"):
        _deps([]).index_on_first_use(context)


def test_every_graph_of_a_process_shares_the_builds():
    assert Deps().first_use is Deps().first_use


def test_the_clis_own_check_is_remembered_so_the_graph_does_not_walk_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """A command on a project too large to index checks it before the graph runs; the
    graph's turn then tells the same note without walking the tree a second time."""
    import engram.graph.retrieval._first_use as first_use
    from engram.cli._auto_index import ensure_index

    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "1")
    monkeypatch.setattr(first_use, "FIRST_USE", BackgroundIndexing())
    context = Context(project=str(project), engram_home=str(tmp_path / "home"))
    ensure_index(context)

    def no_walk(root: Path, limit: int) -> None:
        raise AssertionError("walked again")

    monkeypatch.setattr(first_use, "plan_first_use", no_walk)
    note = Deps(open_code_index=lambda c: None).index_on_first_use(context)
    assert "this project has more files than is indexed on first use" in note


def test_the_run_that_starts_a_small_build_waits_for_it_and_a_large_one_it_does_not(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    import engram.graph.retrieval._first_use as first_use

    monkeypatch.setenv("ENGRAM_AUTO_INDEX", "on")
    build = HeldBuild()
    monkeypatch.setattr(index_build, "update_indexes", build)
    deps = _deps([])
    context = Context(project=str(project))
    assert deps.first_use.wait(project) == 0.0  # nothing runs
    deps.index_on_first_use(context)
    monkeypatch.setattr(first_use, "WAIT_FILES", 1)  # two files: too many to wait for
    assert deps.first_use.wait(project) == 0.0 and deps.first_use.running(project)
    monkeypatch.setattr(first_use, "WAIT_FILES", 500)
    threading.Timer(0.2, build.release.set).start()
    assert deps.first_use.wait(project) >= 0.15
    assert not deps.first_use.running(project)
