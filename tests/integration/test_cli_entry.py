"""The installed ``engram`` script answers ``--version`` and hands other commands to the app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import engram

pytestmark = pytest.mark.integration

SCRIPT = Path(sys.executable).with_name("engram")


def _engram(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_script_prints_the_version():
    done = _engram("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"engram {engram.__version__}\n", "")


def test_the_script_hands_other_command_lines_to_the_app():
    done = _engram("--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: engram" in done.stdout and "--version" in done.stdout
    wrong = _engram("-V")
    assert wrong.returncode == 2 and "No such option: -V" in wrong.stderr


def test_help_shows_flags_without_a_value_type():
    done = _engram("index", "--help")
    assert done.returncode == 0, done.stderr
    assert "--json" in done.stdout and "<bool>" not in done.stdout
    assert "<path>" in done.stdout  # options that take a value still show its type
