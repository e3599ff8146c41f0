"""A full disk under ``ENGRAM_HOME`` (a small tmpfs filled up): ``memory save`` fails cleanly.

At every amount of free space tried, a save either succeeds (and the fact is there) or prints
one clear message and stores nothing; the memory database opens afterwards and ``engram
doctor`` finds it sound. Mounting needs root or CAP_SYS_ADMIN; elsewhere the test skips.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.storage_faults import engram, make_project
from tests.support.tmpfs import MountRefusedError, mounted

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FREE_KIB = (0, 16, 36, 48, 96)
"""Free space left before the save: none, less than SQLite's shared-memory file, a little."""


def fill(home: Path, leave_kib: int) -> Path:
    """Fill the file system of ``home`` but for ``leave_kib`` KiB; return the filler file."""
    filler = home / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 1024)
                out.flush()
                stats = os.statvfs(home)
                if stats.f_bavail * stats.f_frsize <= leave_kib * 1024:
                    break
        except OSError:
            pass
    return filler


def facts(project: Path, home: Path) -> set[str]:
    listed = engram(("memory", "list", "--json"), project, home, {})
    assert listed.returncode == 0, listed.stderr
    return {fact["text"] for fact in json.loads(listed.stdout)}


def save_with_free_space(workdir: Path, free_kib: int) -> bool:
    """Save a fact with ``free_kib`` KiB left; check the outcome; return True if it was saved."""
    project = make_project(workdir / "project")
    with mounted(workdir / "home", "1m") as home:
        first = engram(("memory", "save", "Deploys run from the main branch"), project, home, {})
        assert first.returncode == 0, first.stderr
        filler = fill(home, free_kib)
        done = engram(("memory", "save", "Releases are cut on Tuesdays"), project, home, {})
        filler.unlink()
        output = done.stdout + done.stderr
        assert "Traceback" not in output
        stored = facts(project, home)
        if done.returncode == 0:
            assert "saved" in output and "Releases are cut on Tuesdays" in stored
        else:
            assert output.count("error:") == 1 and "disk is full" in output, output
            assert stored == {"Deploys run from the main branch"}
        doctor = engram(("doctor", "--json"), project, home, {})
        rows = {row["store"]: row["status"] for row in json.loads(doctor.stdout)}
        assert rows["memory"] == "ok", doctor.stdout
        return done.returncode == 0


def test_save_on_a_full_disk(tmp_path):
    try:
        saved = [save_with_free_space(tmp_path / str(kib), kib) for kib in FREE_KIB]
    except MountRefusedError as exc:
        pytest.skip(f"mounting a tmpfs is not permitted here: {exc}")
    assert not saved[0] and saved[-1], dict(zip(FREE_KIB, saved, strict=True))
