"""Every command the README's command tables show exists, with every option they name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from engram.cli._app import app

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `(engram [^`]+)`", re.MULTILINE)
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b")
WORD = re.compile(r"[a-z][a-z-]*")
NOT_COMMANDS = ("engram run` exit code", "engram context` pipeline", "engram --version")


def _rows() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [
        span.replace("\\|", "|")
        for span in ROW.findall(text)
        if not any(f"{span}`".startswith(skip) for skip in NOT_COMMANDS)
    ]


def _words(group: Any, alternative: str) -> tuple[list[str], Any]:
    """Follow the leading sub-command words of one alternative from ``group``."""
    path: list[str] = []
    command = group
    for token in alternative.split():
        if not WORD.fullmatch(token) or not _is_group(command):
            break
        found = command.commands.get(token)
        if found is None:
            break
        path.append(token)
        command = found
    return path, command


def _is_group(command: Any) -> bool:
    return isinstance(getattr(command, "commands", None), dict)


def _options(command: Any) -> set[str]:
    names = {name for param in command.params for name in param.opts + param.secondary_opts}
    if _is_group(command):
        for sub in command.commands.values():
            names |= _options(sub)
    return names


def test_every_command_and_option_in_the_readme_tables_exists():
    root = typer.main.get_command(app)
    assert _is_group(root)
    rows = _rows()
    assert len(rows) >= 25  # the tables are found at all
    problems = []
    for row in rows:
        body = row.removeprefix("engram ").split(" / ")
        path, command = _words(root, body[0])
        if not path:
            problems.append(f"{row}: no such command")
            continue
        # Alternatives ("list …|show ID|search Q") name sibling sub-commands of one group.
        group = command if _is_group(command) else None
        parent = root
        for word in path[:-1]:
            parent = parent.commands[word]
        siblings = group or parent
        known = _options(command)
        rest = body[0].split()[len(path) :]
        if _is_group(command) and rest and WORD.fullmatch(rest[0]):
            problems.append(f"{row}: engram {' '.join(path)} has no sub-command {rest[0]}")
        # Sub-command alternatives: "list [--unverified]|show ID|search Q"; option values
        # ("--mode exact|semantic", "--to CHECKPOINT|start") are not.
        pieces = re.sub(r"\[[^\]]*\]", "", " ".join(body)).split("|")
        for before, piece in zip(pieces, pieces[1:], strict=False):
            if re.search(r"--[a-z-]+ +[A-Z]+ *$", before):
                continue
            head = piece.strip().split()
            if head and WORD.fullmatch(head[0]) and _is_group(siblings):
                sub = siblings.commands.get(head[0])
                if sub is None:
                    problems.append(f"{row}: no sub-command {head[0]} beside {path[-1]}")
                else:
                    known |= _options(sub)
        for flag in FLAG.findall(row):
            if flag not in known:
                problems.append(f"{row}: {flag} is not an option of engram {' '.join(path)}")
    assert problems == []
