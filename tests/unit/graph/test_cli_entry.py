"""The ``engram`` console script: its version answer, its version number, its hand-over to the app."""

from __future__ import annotations

import gc
import sys
import tomllib
from importlib import import_module
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

import engram
from engram.cli import _entry as entry
from engram.cli import app

ROOT = Path(__file__).resolve().parents[3]


def test_the_version_constant_is_pyprojects_and_the_installed_one():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert engram.__version__ == declared
    assert engram.__version__ == version("engram")


def test_the_console_script_is_the_entry_module():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["engram"].partition(":")
    assert getattr(import_module(module), name) is entry.main


def test_version_answers_as_the_app_does(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["engram", "--version"])
    entry.main()
    fast = capsys.readouterr()
    from_app = CliRunner().invoke(app, ["--version"])
    assert from_app.exit_code == 0
    assert fast.out == from_app.stdout == f"engram {engram.__version__}\n"
    assert fast.err == ""


@pytest.fixture
def gc_threshold():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)
    gc.unfreeze()


@pytest.mark.parametrize("args", [["--help"], ["--version", "--help"], ["-V"], []])
def test_every_other_command_line_goes_to_the_app(monkeypatch, gc_threshold, args: list[str]):
    ran: list[tuple[list[str], int]] = []
    monkeypatch.setattr(sys, "argv", ["engram", *args])
    monkeypatch.setattr(
        "engram.cli._app.run_app", lambda: ran.append((sys.argv[1:], gc.get_threshold()[0]))
    )
    entry.main()
    assert ran == [(args, entry.GC_YOUNG_THRESHOLD)]


def test_the_collector_spares_the_shutdown_even_when_the_command_fails(monkeypatch, gc_threshold):
    def fail() -> None:
        raise SystemExit(2)

    monkeypatch.setattr(sys, "argv", ["engram", "search"])
    monkeypatch.setattr("engram.cli._app.run_app", fail)
    gc.unfreeze()
    with pytest.raises(SystemExit):
        entry.main()
    assert gc.get_freeze_count() > 0
