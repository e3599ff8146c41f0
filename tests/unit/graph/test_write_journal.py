"""The undo journal of a write over several files: what a killed writer's journal puts back."""

from __future__ import annotations

import json
import os
import stat

import pytest

import engram.graph.tools._write_journal as journal_module
from engram.graph.tools._text_edits import FileChange
from engram.graph.tools._write import (
    SCRATCH_FOLDER,
    roll_back_interrupted_writes,
    write_changes,
)
from engram.graph.tools._write_journal import JOURNAL_SUFFIX, begin_write, finish_write
from tests.support.state import state_of


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    state_of(root).make(SCRATCH_FOLDER)
    (root / "kept.py").write_text("old kept\n")
    (root / "gone.sh").write_text("#!/bin/sh\necho old\n")
    (root / "gone.sh").chmod(0o750)
    return root


def changes(root):
    return [
        FileChange("kept.py", root / "kept.py", "old kept\n", "new kept\n"),
        FileChange("gone.sh", root / "gone.sh", "#!/bin/sh\necho old\n", None),
        FileChange("made.py", root / "made.py", None, "new file\n"),
    ]


def interrupted(root, monkeypatch):
    """Write the journal and the files' new state as a writer killed at the end would."""
    journal = begin_write(state_of(root).path(SCRATCH_FOLDER), changes(root))
    (root / "kept.py").write_text("new kept\n")
    (root / "gone.sh").unlink()
    (root / "made.py").write_text("new file\n")
    monkeypatch.setattr(journal_module, "_running", lambda pid: False)
    return journal


def test_a_killed_writers_journal_puts_every_file_back(project, monkeypatch, caplog):
    journal = interrupted(project, monkeypatch)
    assert journal is not None and journal.name.endswith(JOURNAL_SUFFIX)
    assert sorted(roll_back_interrupted_writes(project, state_of(project))) == [
        "gone.sh",
        "kept.py",
        "made.py",
    ]
    assert (project / "kept.py").read_text() == "old kept\n"
    assert (project / "gone.sh").read_text() == "#!/bin/sh\necho old\n"
    assert stat.S_IMODE((project / "gone.sh").stat().st_mode) == 0o750
    assert not (project / "made.py").exists() and not journal.exists()
    assert "put back as they were: made.py, gone.sh, kept.py" in caplog.text


def test_a_running_writers_journal_is_left_alone(project):
    journal = begin_write(
        state_of(project).path(SCRATCH_FOLDER), changes(project)
    )  # this process: running
    (project / "kept.py").write_text("new kept\n")
    assert roll_back_interrupted_writes(project, state_of(project)) == []
    assert (project / "kept.py").read_text() == "new kept\n" and journal is not None
    finish_write(journal)
    assert not journal.exists()


def test_one_file_needs_no_journal(project):
    assert begin_write(state_of(project).path(SCRATCH_FOLDER), changes(project)[:1]) is None
    assert begin_write(None, changes(project)) is None


def test_a_planted_journal_cannot_write_outside_the_project_or_into_protected_folders(
    project, monkeypatch
):
    files = [
        {"path": "../outside.txt", "before": "planted", "mode": None},
        {"path": ".git/config", "before": "planted", "mode": None},
        {"path": "kept.py", "before": "restored\n", "mode": None},
    ]
    planted = state_of(project).path(SCRATCH_FOLDER) / f"x{JOURNAL_SUFFIX}"
    planted.write_text(json.dumps({"pid": os.getpid() + 1, "files": files}))
    (state_of(project).path(SCRATCH_FOLDER) / f"broken{JOURNAL_SUFFIX}").write_text("{not json")
    monkeypatch.setattr(journal_module, "_running", lambda pid: False)
    roll_back_interrupted_writes(project, state_of(project))
    assert not (project.parent / "outside.txt").exists()
    assert not (project / ".git" / "config").exists()
    assert (project / "kept.py").read_text() == "restored\n"


def test_the_next_write_rolls_back_first_and_keeps_no_journal(project, monkeypatch):
    interrupted(project, monkeypatch)
    write_changes(
        project,
        state_of(project),
        [
            FileChange("other.py", project / "other.py", None, "x\n"),
            FileChange("more.py", project / "more.py", None, "y\n"),
        ],
    )
    assert (project / "kept.py").read_text() == "old kept\n"
    assert (project / "other.py").read_text() == "x\n"
    assert not list(state_of(project).path(SCRATCH_FOLDER).glob(f"*{JOURNAL_SUFFIX}"))
