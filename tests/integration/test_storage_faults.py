"""Hostile repositories and damaged stores: no planted code runs, no traceback, a clear message.

A project that ships its own ``.engram/index`` (pickles under every name the index uses, a
forged stamp, malformed JSON) is never read nor rewritten: engram builds its own index in the
project's state folder under ``ENGRAM_HOME``; a damaged index repairs itself; damaged or
unusable stores in ``ENGRAM_HOME`` give one message saying what to do.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from engram.stores import Ledger
from tests.support.storage_faults import CASES, run_case

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_storage_fault_holds(case, tmp_path):
    assert run_case(case, tmp_path) == ""


def test_git_add_all_leaves_engram_data_out(tmp_path):
    subprocess_git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    try:
        subprocess.run([*subprocess_git, "init", "-q", str(tmp_path)], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    ledger = Ledger.for_project(tmp_path, Path(os.environ["ENGRAM_HOME"]))
    ledger.append("t1", "event", {"secret": "transcript"})
    # The transcript went to the state folder under ENGRAM_HOME, not into the project.
    written = ledger.path("t1")
    assert "transcript" in written.read_text()
    assert not written.resolve().is_relative_to(tmp_path.resolve())
    (tmp_path / ".engram").mkdir()
    (tmp_path / ".engram" / "ENGRAM.md").write_text("team rules\n")
    subprocess.run([*subprocess_git, "-C", str(tmp_path), "add", "-A"], check=True)
    listed = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert listed == [".engram/ENGRAM.md"]
