"""User mistakes get a message and an exit code, never a traceback, and nothing is created."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.cli import app


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "args",
    [
        ["search", "foo", "--path", "{missing}"],
        ["index", "{missing}"],
        ["context", "fix it", "--path", "{missing}"],
        ["memory", "list", "--path", "{missing}"],
        ["graph", "foo", "--path", "{missing}"],
        ["profile", "fix it", "--path", "{missing}"],
        ["sessions", "list", "--path", "{missing}"],
    ],
)
def test_missing_project_folder(tmp_path: Path, args: list[str]):
    missing = tmp_path / "no" / "such" / "project"
    result = CliRunner().invoke(app, [a.format(missing=missing) for a in args])
    assert result.exit_code == 2, result.output
    assert "does not exist" in _flat(result.output) and "--path" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not missing.exists()


def test_project_path_that_is_a_file(tmp_path: Path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = CliRunner().invoke(app, ["search", "x", "--path", str(target)])
    assert result.exit_code == 2 and "is not a folder" in _flat(result.output)


def test_empty_context_task(tmp_path: Path):
    result = CliRunner().invoke(app, ["context", "  ", "--path", str(tmp_path)])
    assert result.exit_code == 2 and "the task is empty" in _flat(result.output)


def test_run_without_model(tmp_path: Path):
    result = CliRunner().invoke(app, ["run", "do it", "--path", str(tmp_path)])
    assert result.exit_code == 2 and "ENGRAM_MODEL" in result.output
