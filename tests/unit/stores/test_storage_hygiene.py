"""Index trust stamps, the private state folder under ENGRAM_HOME, owner-only databases, doctor checks."""

from __future__ import annotations

import json
import stat

import pytest

from engram.stores import Ledger, check_home, check_index
from engram.stores._health import check_database
from engram.stores.codeindex import INDEX_DIR
from engram.stores.project import claim_index_dir, index_is_trusted, private_dir, project_state_dir
from engram.stores.project._index_trust import STAMP_FILE, expected_stamp
from engram.stores.project._state import StateLinkError
from engram.stores.sqlite import sqlite_connect


def test_a_fresh_index_folder_is_stamped_and_trusted(tmp_path):
    index_dir = tmp_path / INDEX_DIR
    assert not index_is_trusted(index_dir, tmp_path)
    assert claim_index_dir(index_dir, tmp_path, home=tmp_path) is False  # nothing to discard
    assert index_is_trusted(index_dir, tmp_path)
    assert json.loads((index_dir / STAMP_FILE).read_text()) == expected_stamp(tmp_path)


@pytest.mark.parametrize(
    "stamp",
    [
        None,
        "not json",
        json.dumps({"format": "engram-index", "version": 5, "engram": "0.0.0", "root": "0" * 64}),
        "[" * 5000,
        "x" * 10_000,
    ],
    ids=["none", "garbage", "forged", "deep", "huge"],
)
def test_an_untrusted_index_folder_is_discarded_unread(tmp_path, stamp):
    index_dir = tmp_path / INDEX_DIR
    index_dir.mkdir(parents=True)
    (index_dir / "code_graph.pkl").write_bytes(b"\x80\x05planted")
    if stamp is not None:
        (index_dir / STAMP_FILE).write_text(stamp)
    assert claim_index_dir(index_dir, tmp_path, home=tmp_path) is True
    assert not (index_dir / "code_graph.pkl").exists()
    assert index_is_trusted(index_dir, tmp_path)


def test_an_index_copied_from_another_root_is_not_trusted(tmp_path):
    claim_index_dir(tmp_path / "a" / INDEX_DIR, tmp_path / "a", home=tmp_path)
    (tmp_path / "b").mkdir(parents=True)
    (tmp_path / "a" / INDEX_DIR).rename(tmp_path / "b" / INDEX_DIR)
    assert not index_is_trusted(tmp_path / "b" / INDEX_DIR, tmp_path / "b")


def test_a_shipped_index_symlink_is_dropped_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    project = tmp_path / "project"
    project.mkdir()
    (project / INDEX_DIR).symlink_to(outside)
    assert claim_index_dir(project / INDEX_DIR, project, home=tmp_path) is True
    assert (outside / "keep.txt").read_text() == "mine"
    assert (project / INDEX_DIR).is_dir() and not (project / INDEX_DIR).is_symlink()


def test_the_state_folder_is_private_and_outside_the_project(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    Ledger.for_project(project, home).append("t1", "event", {"x": 1})
    state = project_state_dir(project, home)
    assert state.parent == home / "projects"
    assert (state / "ledger" / "t1.jsonl").is_file()
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert not (project / ".engram").exists()  # nothing engram reads back is in the tree


def test_a_link_in_the_state_folder_is_refused_not_followed(tmp_path):
    home, outside = tmp_path / "home", tmp_path / "outside"
    outside.mkdir()
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "p-1").symlink_to(outside)
    with pytest.raises(StateLinkError):
        private_dir(home / "projects" / "p-1" / "ledger", home)
    assert list(outside.iterdir()) == []


def test_databases_are_created_owner_only(tmp_path):
    conn = sqlite_connect(tmp_path / "memory.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert stat.S_IMODE((tmp_path / "memory.sqlite").stat().st_mode) == 0o600


def test_health_checks_name_what_is_broken_and_what_can_be_rebuilt(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    conn = sqlite_connect(home / "memory.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    by_store = {h.store: h for h in check_home(home)}
    assert by_store["memory"].status == "ok" and by_store["sessions"].status == "missing"
    damaged = home / "checkpoints.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 100)
    broken = check_database("sessions", damaged)
    assert broken.status == "broken" and not broken.repairable
    assert damaged.read_bytes().startswith(b"SQLite format 3")  # read-only: left as it was
    index = check_index(tmp_path, tmp_path / INDEX_DIR)
    assert index.status == "missing" and index.repairable
    file_home = tmp_path / "file"
    file_home.write_text("x")
    assert check_home(file_home)[0].status == "broken"


def test_an_upgrade_keeps_the_index_but_another_format_does_not(tmp_path):
    index_dir = tmp_path / INDEX_DIR
    claim_index_dir(index_dir, tmp_path, home=tmp_path)
    (index_dir / "manifest.sqlite").write_bytes(b"kept")
    stamp = json.loads((index_dir / STAMP_FILE).read_text())
    (index_dir / STAMP_FILE).write_text(json.dumps({**stamp, "engram": "0.0.1"}))
    assert (
        claim_index_dir(index_dir, tmp_path, home=tmp_path) is False
    )  # an older engram, the same format
    assert (index_dir / "manifest.sqlite").read_bytes() == b"kept"
    (index_dir / STAMP_FILE).write_text(json.dumps({**stamp, "version": stamp["version"] - 1}))
    assert claim_index_dir(index_dir, tmp_path, home=tmp_path) is True
    assert not (index_dir / "manifest.sqlite").exists()
