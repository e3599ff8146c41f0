"""The warm server's watcher follows the project's own folders, never a link out of it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from engram.cli import _serve_projects
from engram.cli._command_support import load_context
from engram.cli._serve_projects import WarmProjects, watched_folders
from engram.stores.codeindex import INDEX_DIR

WAIT_S = 20.0


class Manifest:
    def get_meta(self, key: str, default: str = "") -> str:
        return "1"

    def files(self) -> dict:
        return {}


class CountingIndex:
    """A stand-in code index that counts the watcher's incremental updates."""

    def __init__(self) -> None:
        self.manifest = Manifest()
        self.updates = 0
        self.changed = threading.Event()

    def update(self, **_: object) -> None:
        self.updates += 1
        self.changed.set()

    def close(self) -> None:
        pass


@pytest.fixture
def followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project with a link to an outside folder, its code index kept (and so watched)."""
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "a.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "data").symlink_to(outside, target_is_directory=True)
    context = load_context(project)
    manifest = Path(context.state.path(INDEX_DIR, "manifest.sqlite"))
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text("")
    index = CountingIndex()
    warm = WarmProjects()
    warm.keep("code_index", context, lambda _: index)
    try:
        wait_until_watched(project / "pkg", index)
        yield project, index, outside
    finally:
        warm.close()


def wait_until_watched(folder: Path, index: CountingIndex) -> None:
    """Write into ``folder`` until the watcher reports an update (it is then running)."""
    deadline = time.monotonic() + WAIT_S
    number = 0
    while time.monotonic() < deadline:
        index.changed.clear()
        (folder / f"probe_{number}.py").write_text(f"y = {number}\n")
        if index.changed.wait(1.0):
            return
        number += 1
    raise AssertionError(f"no update after writing into {folder}")


def test_a_change_behind_a_link_out_of_the_project_runs_no_update(followed):
    _project, index, outside = followed
    time.sleep(1.0)  # let the probe's burst settle
    before = index.updates
    for number in range(5):
        (outside / f"elsewhere_{number}.py").write_text("z = 1\n")
    time.sleep(2.0)
    assert index.updates == before


def test_a_folder_created_after_the_start_is_followed(followed):
    project, index, _ = followed
    fresh = project / "fresh" / "deeper"
    fresh.mkdir(parents=True)
    (fresh / "first.py").write_text("a = 1\n")
    wait_until_watched(fresh, index)  # a write deep in the new folders reaches the watcher


def test_watched_folders_leave_out_links_skipped_folders_and_the_home(tmp_path):
    root = tmp_path / "p"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / ".git" / "objects").mkdir(parents=True)
    (root / "home").mkdir()
    (root / "to_root").symlink_to("/", target_is_directory=True)
    found = watched_folders(root, str(root / "home"))
    assert found is not None
    assert sorted(os.path.relpath(f, root) for f in found) == [".", "src", "src/pkg"]


def test_a_tree_with_too_many_folders_is_not_followed(tmp_path, monkeypatch):
    for number in range(6):
        (tmp_path / f"d{number}").mkdir()
    monkeypatch.setattr(_serve_projects, "MAX_WATCHED_FOLDERS", 5)
    assert watched_folders(tmp_path, "/nowhere") is None
    monkeypatch.setattr(_serve_projects, "MAX_WATCHED_FOLDERS", 7)
    assert watched_folders(tmp_path, "/nowhere") is not None
