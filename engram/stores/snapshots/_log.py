"""The snapshot log: which tree each edit or command of a session started from and left.

One JSON line per record in ``snapshots/log/<thread>.jsonl`` of the project's state folder; a
line torn by a crash is skipped on reading, so the log never blocks a rewind.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from engram.stores.project import ProjectState
from engram.stores.snapshots._trees import SNAPSHOT_FOLDER

RecordKind = Literal["write", "command", "rewind"]
VERIFY_TOOL = "verify"
"""The ``tool`` of a record around the verify loop's checks: a command engram ran itself,
rewound like any other but never the change ``/undo`` reverts."""


@dataclass(frozen=True)
class SnapshotRecord:
    """The trees around one approved action (or one rewind) of a session."""

    thread_id: str
    checkpoint_id: str | None
    """The LangGraph checkpoint the action ran from (its state is ``before``); None for a
    rewind, which belongs to no checkpoint."""
    kind: RecordKind
    tool: str
    """The tool that ran (``edit_file``, ``run_command``, …) or ``rewind``."""
    before: str
    after: str
    paths: tuple[str, ...]
    """Files that differ between ``before`` and ``after``."""
    at: float
    kept: int | None = None
    """For a rewind: how many of the session's changes still in effect before it stay in
    effect after it (the ones ``/undo`` may still revert); None for other records and for
    rewinds logged before this was recorded."""


class SnapshotLog:
    """Appends and reads a project's snapshot records, one file per session."""

    def __init__(self, state: ProjectState) -> None:
        """Bind to a project's state folder (under ENGRAM_HOME)."""
        self.state = state
        self.folder = state.path(SNAPSHOT_FOLDER, "log")

    def _file(self, thread_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id)
        return self.folder / f"{safe}.jsonl"

    def append(self, record: SnapshotRecord) -> None:
        """Add one record durably (a single appended line, flushed to disk)."""
        self.state.make(SNAPSHOT_FOLDER, "log")
        line = json.dumps({**asdict(record), "paths": list(record.paths)}) + "\n"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
        fd = os.open(self._file(record.thread_id), flags, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def records(self, thread_id: str) -> list[SnapshotRecord]:
        """Return a session's records, oldest first."""
        try:
            lines = self._file(thread_id).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found: list[SnapshotRecord] = []
        for line in lines:
            try:
                raw = json.loads(line)
                found.append(SnapshotRecord(**{**raw, "paths": tuple(raw["paths"])}))
            except (ValueError, TypeError, KeyError):
                continue  # a line torn by a crash
        return found


def new_record(
    thread_id: str,
    checkpoint_id: str | None,
    kind: RecordKind,
    tool: str,
    before: str,
    after: str,
    paths: set[str],
    *,
    kept: int | None = None,
) -> SnapshotRecord:
    """Return a record stamped with the current time."""
    return SnapshotRecord(
        thread_id, checkpoint_id, kind, tool, before, after, tuple(sorted(paths)), time.time(), kept
    )
