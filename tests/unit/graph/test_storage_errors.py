"""Storage failures become one message with what to do; ENGRAM_PROJECT names the project."""

from __future__ import annotations

import errno
import sqlite3
from datetime import UTC, datetime

import pytest

from engram.cli._command_support import load_context
from engram.cli._storage_errors import storage_message
from engram.stores.memory import import_jsonl


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (OSError(errno.ENOSPC, "No space left on device", "/h/memory.sqlite"), "disk is full"),
        (OSError(errno.EROFS, "Read-only file system", "/h/memory.sqlite"), "cannot write"),
        (FileExistsError(errno.EEXIST, "File exists", "/h"), "a file is in the way"),
        (sqlite3.DatabaseError("database disk image is malformed"), "cannot be used"),
        (sqlite3.OperationalError("database or disk is full"), "disk is full"),
    ],
)
def test_storage_failures_get_a_message_and_a_next_step(exc, says):
    message, hint = storage_message(exc)
    assert says in message and hint


def test_other_errors_are_not_storage_failures():
    assert storage_message(ValueError("bug")) is None
    assert storage_message(OSError(errno.ECONNRESET, "reset")) is None


def test_engram_project_names_the_project_unless_a_path_is_given(tmp_path, monkeypatch):
    (tmp_path / "p").mkdir()
    monkeypatch.setenv("ENGRAM_PROJECT", str(tmp_path / "p"))
    assert load_context().project_path == (tmp_path / "p").resolve()
    assert load_context(tmp_path).project_path == tmp_path.resolve()


def test_import_skips_hostile_lines_and_keeps_the_rest():
    from langgraph.store.memory import InMemoryStore

    lines = [
        '{"text": "The build uses Gradle 8", "scope": "global"}',
        "[" * 5000 + "]" * 5000,
        '{"text": "big", "scope": "global", "seq": ' + "9" * 30 + "}",
        '{"text": "nested big", "scope": "global", "provenance": {"n": ' + "9" * 25 + "}}",
        '{"text": "Releases are cut on Tuesdays", "scope": "global"}',
    ]
    report = import_jsonl(InMemoryStore(), lines, project_key="p", now=datetime.now(UTC))
    assert report.imported == 2
    assert [number for number, _ in report.skipped] == [2, 3, 4]
