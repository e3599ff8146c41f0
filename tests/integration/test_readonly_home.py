"""A read-only ``ENGRAM_HOME`` (a tmpfs remounted read-only): reads and export work, saving says why not.

Runs the real CLI as a subprocess. Mounting needs root or CAP_SYS_ADMIN; elsewhere the test skips
with the reason.
"""

from __future__ import annotations

import json

import pytest

from tests.support.storage_faults import engram, make_project
from tests.support.tmpfs import MountRefusedError, mounted, remount_read_only

pytestmark = pytest.mark.integration

FACTS = ("Deploys run from the main branch", "Releases are cut on Tuesdays")


@pytest.fixture
def read_only_home(tmp_path):
    project = make_project(tmp_path / "project")
    try:
        with mounted(tmp_path / "home", "2m") as home:
            for text in FACTS:
                saved = engram(("memory", "save", text), project, home, {})
                assert saved.returncode == 0, saved.stderr
            assert engram(("sessions", "list"), project, home, {}).returncode == 0
            remount_read_only(home)
            yield project, home
    except MountRefusedError as exc:
        pytest.skip(f"mounting a tmpfs is not permitted here: {exc}")


def test_reads_and_export_work(read_only_home):
    project, home = read_only_home
    exported = engram(("memory", "export"), project, home, {})
    assert exported.returncode == 0, exported.stderr
    assert sorted(json.loads(line)["text"] for line in exported.stdout.splitlines()) == sorted(
        FACTS
    )
    listed = engram(("memory", "list", "--json"), project, home, {})
    assert listed.returncode == 0, listed.stderr
    assert {fact["text"] for fact in json.loads(listed.stdout)} == set(FACTS)
    found = engram(("memory", "search", "deploy branch", "--json"), project, home, {})
    assert found.returncode == 0 and "main branch" in found.stdout, found.stderr
    sessions = engram(("sessions", "list", "--json"), project, home, {})
    assert sessions.returncode == 0 and json.loads(sessions.stdout) == [], sessions.stderr
    doctor = engram(("doctor", "--json"), project, home, {})
    assert "Traceback" not in doctor.stdout + doctor.stderr
    assert {row["store"]: row["status"] for row in json.loads(doctor.stdout)}["memory"] == "ok"


@pytest.mark.parametrize(
    "command",
    [
        ("memory", "save", "Builds use Gradle 8"),
        ("memory", "import", "facts.jsonl"),
    ],
)
def test_writes_give_one_clear_message(read_only_home, command):
    project, home = read_only_home
    (project / "facts.jsonl").write_text(json.dumps({"text": "Builds use Gradle 8"}) + "\n")
    done = engram(command, project, home, {})
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "Traceback" not in output
    assert output.count("error:") == 1 and "can only be read" in output, output
    assert "ENGRAM_HOME" in output
    listed = engram(("memory", "list", "--json"), project, home, {})
    assert {fact["text"] for fact in json.loads(listed.stdout)} == set(FACTS)


def test_missing_home_on_read_only_disk_reads_as_empty(read_only_home):
    project, home = read_only_home
    empty = home / "never-made"
    listed = engram(("memory", "list", "--json"), project, empty, {})
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
    sessions = engram(("sessions", "list", "--json"), project, empty, {})
    assert sessions.returncode == 0 and json.loads(sessions.stdout) == [], sessions.stderr
