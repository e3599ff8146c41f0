"""Snapshots around a tool step and a verify round, and what ``/undo`` takes back."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engram.graph import SessionError
from engram.graph.tools import ActionSnapshots
from engram.sessions import undo_last_change
from engram.stores.snapshots import VERIFY_TOOL, SnapshotLog
from tests.support.state import state_of

pytestmark = pytest.mark.integration  # opening the tree store asks git whether this is a repo


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    (root / "old.txt").write_text("stale\n")
    return root


def test_a_command_step_reports_the_project_files_it_changed_without_caches(tmp_path):
    root = _project(tmp_path)
    state = state_of(root)
    step = ActionSnapshots(state, "t1", "c1")
    before = step.before()
    (root / "old.txt").unlink()
    (root / "gen").mkdir()
    (root / "gen" / "out.txt").write_text("made\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "app.cpython-312.pyc").write_bytes(b"\x00")
    step.after("run_command", before)
    assert step.command_changes == ["gen/out.txt", "old.txt"]
    [record] = SnapshotLog(state).records("t1")
    assert record.kind == "command" and "__pycache__/app.cpython-312.pyc" in record.paths
    assert not (root / ".engram").exists()  # the snapshots live in the state folder


def test_a_verify_round_is_logged_as_a_command_but_is_no_change_of_the_model(tmp_path):
    root = _project(tmp_path)
    state = state_of(root)
    edit = ActionSnapshots(state, "t1", "c1")
    before = edit.before()
    (root / "app.py").write_text("x = 2\n")
    edit.after("edit_file", before)
    verify = ActionSnapshots(state, "t1", "c2")
    before = verify.before()
    (root / ".pytest_cache").mkdir()
    (root / ".pytest_cache" / "lastfailed").write_text("{}")
    verify.after(VERIFY_TOOL, before)
    assert verify.command_changes == []
    records = SnapshotLog(state).records("t1")
    assert [(r.kind, r.tool) for r in records] == [("write", "edit_file"), ("command", VERIFY_TOOL)]

    app: Any = SimpleNamespace(context=SimpleNamespace(project_path=root, state=state))
    undone = undo_last_change(app, "t1")  # the edit, not the checks' cache
    assert undone.tool == "edit_file"
    assert (root / "app.py").read_text() == "x = 1\n"
    # the checks' cache is kept: what a command wrote may hold edits made while it ran
    assert (root / ".pytest_cache" / "lastfailed").read_text() == "{}"
    with pytest.raises(SessionError, match="no change of this session is left to undo"):
        undo_last_change(app, "t1")
