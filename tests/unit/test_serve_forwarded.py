"""The one list of commands the warm server answers, as the entry point and the client read it."""

from __future__ import annotations

import sys

import pytest
import typer
from typer.core import TyperGroup

from engram.cli import _entry as entry
from engram.cli import app
from engram.cli._forwarded import FORWARDED, FORWARDED_SUBCOMMANDS, is_forwarded


def test_the_forwarded_commands_are_these():
    """Changing the list changes what the server runs: it must stay read-only commands."""
    assert FORWARDED == {"context", "search", "graph", "slice", "profile"}
    assert FORWARDED_SUBCOMMANDS == {("memory", "search")}


def test_every_forwarded_command_is_one_of_the_apps():
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    assert FORWARDED <= set(root.commands)
    for group_name, name in FORWARDED_SUBCOMMANDS:
        group = root.commands[group_name]
        assert isinstance(group, TyperGroup)
        assert name in group.commands, (group_name, name)


@pytest.mark.parametrize(
    ("args", "forwarded"),
    [
        (["context", "fix it"], True),
        (["search"], True),  # a usage error is the server's to print, as it would here
        (["graph", "f", "--json"], True),
        (["slice", "f"], True),
        (["profile", "fix it"], True),
        (["memory", "search", "java"], True),
        (["memory"], False),
        (["memory", "save", "a fact"], False),
        (["memory", "--help", "search"], False),
        (["index", "."], False),
        (["serve"], False),
        (["--help"], False),
        ([], False),
    ],
)
def test_is_forwarded(args: list[str], forwarded: bool):
    assert is_forwarded(args) is forwarded


@pytest.mark.parametrize(
    ("args", "serve", "to_server"),
    [
        (["slice", "f"], "", True),
        (["memory", "search", "java"], "", True),
        (["memory", "list"], "", False),
        (["slice", "f"], "off", False),
    ],
)
def test_the_entry_point_hands_the_listed_commands_to_the_server(
    monkeypatch, args: list[str], serve: str, to_server: bool
):
    sent: list[list[str]] = []
    ran: list[list[str]] = []
    monkeypatch.setenv("ENGRAM_SERVE", serve)
    monkeypatch.setattr(sys, "argv", ["engram", *args])
    monkeypatch.setattr("engram.cli._serve_client.forward", lambda a: sent.append(a) or 0)
    monkeypatch.setattr("engram.cli._app.run_app", lambda: ran.append(sys.argv[1:]))
    monkeypatch.setattr("gc.freeze", lambda: None)
    try:
        entry.main()
    except SystemExit as done:
        assert done.code == 0
    assert (sent, ran) == (([args], []) if to_server else ([], [args]))
