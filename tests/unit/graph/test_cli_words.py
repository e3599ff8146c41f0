"""A task, query or fact may be typed as several words, without quotes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engram.cli import app
from engram.cli._command_support import words


def _invoke(tmp_path: Path, *args: str):
    env = {"ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_SERVE": "off"}
    result = CliRunner().invoke(app, [*args, "--path", str(tmp_path)], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_words_join_with_one_space_and_keep_a_quoted_argument_as_it_is():
    assert words(["fix", "the", "login", "bug"]) == "fix the login bug"
    assert words(["fix the\n  login bug"]) == "fix the\n  login bug"
    assert words(None) == "" and words([]) == ""


def test_unquoted_words_mean_the_same_as_one_quoted_argument(tmp_path: Path):
    saved = json.loads(_invoke(tmp_path, "memory", "save", "use", "pytest", "here", "--json"))
    assert saved["text"] == "use pytest here"
    found = json.loads(_invoke(tmp_path, "memory", "search", "pytest", "here", "--json"))
    assert [hit["text"] for hit in found] == ["use pytest here"]
    apart = json.loads(_invoke(tmp_path, "profile", "fix", "the", "login", "crash", "--json"))
    quoted = json.loads(_invoke(tmp_path, "profile", "fix the login crash", "--json"))
    assert apart == quoted and "(login)" in " ".join(apart["reasons"])


def test_an_empty_query_is_refused_with_an_example(tmp_path: Path):
    env = {"ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_SERVE": "off"}
    result = CliRunner().invoke(app, ["search", "  ", "--path", str(tmp_path)], env=env)
    assert result.exit_code == 2 and "the query is empty" in result.output
    assert 'engram search "retry delay"' in " ".join(result.output.split())
