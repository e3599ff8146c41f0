"""Undo journal for a write that changes several files, so a kill between two files is undone.

Each file is replaced atomically, but a patch over three files killed after the first would
leave the project half patched. Before the first file is written, the files' old contents go
to a journal in the project's scratch folder; the journal is removed once the last file is in
place. A journal whose writer is no longer running marks an interrupted write: the next write
in the project, or the next session's write tools, put its files back as they were.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from engram.graph.tools._text_edits import FileChange
from engram.stores.files import write_atomically

JOURNAL_SUFFIX = ".undo.json"

Restore = Callable[[str, str | None, int | None], None]
"""Puts a file back: its project-relative path, its old text (None: it did not exist) and its
old mode. It still confines the path (journals live in engram's state folder under ENGRAM_HOME,
out of a repository's reach, but a path is put back only where a write tool may write now)."""


def begin_write(scratch: Path | None, changes: Sequence[FileChange]) -> Path | None:
    """Record the old contents of ``changes``' files; return the journal (None: not needed).

    A single file needs no journal (its replacement is atomic), and without a scratch folder
    (a read-only ENGRAM_HOME) there is nowhere to keep one.

    Raises:
        OSError: The journal could not be written (nothing has been changed yet).
    """
    if scratch is None or len(changes) < 2:
        return None
    files = [{"path": c.path, "before": c.before, "mode": _mode(c.target)} for c in changes]
    journal = scratch / f"write-{os.getpid()}-{uuid.uuid4().hex}{JOURNAL_SUFFIX}"
    data = json.dumps({"pid": os.getpid(), "files": files}).encode("utf-8")
    write_atomically(journal, data, temp_dir=scratch)
    return journal


def finish_write(journal: Path | None) -> None:
    """Drop the journal of a write whose files are all in place."""
    if journal is not None:
        journal.unlink(missing_ok=True)


def roll_back_interrupted(scratch: Path, restore: Restore) -> list[str]:
    """Put back the files of every write whose process died before it finished.

    Journals of running processes (another session writing now) are left alone, and so is
    a journal that cannot be read (it was not written by this code: journals are atomic).

    Raises:
        OSError: A file could not be put back (its journal stays for the next try).

    Returns:
        The project-relative paths put back.
    """
    restored: list[str] = []
    for journal in sorted(scratch.glob(f"*{JOURNAL_SUFFIX}")):
        try:
            record = json.loads(journal.read_text(encoding="utf-8"))
            pid, files = int(record["pid"]), list(record["files"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _running(pid):
            continue
        for entry in reversed(files):
            restore(str(entry["path"]), entry["before"], entry["mode"])
            restored.append(str(entry["path"]))
        journal.unlink(missing_ok=True)
    return restored


def _mode(target: Path) -> int | None:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return None


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this process writes now, in another thread
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True
