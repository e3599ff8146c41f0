"""Keep a checkout's mined history in the index folder, and bring it up to date incrementally.

The file (``history.json``) holds the commits reachable from the HEAD it was mined at, newest
first. When HEAD has moved forward, only the new commits are read; when it moved elsewhere (a
checkout of another branch, a rewrite), the history is mined again. A checkout whose history
cannot be read keeps an empty history with the reason as its note, and the localizer ranks as
it would without history.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from engram.stores.history._mining import (
    BULK_FILES,
    FUNCTION_COMMITS,
    MAX_COMMITS,
    Commit,
    HistoryInterrupted,
    HistoryUnavailable,
    git_functions,
    git_log,
    parse_log,
    run_git,
)

HISTORY_FILE = "history.json"
"""The mined history's file name inside the index folder."""
FORMAT_VERSION = 3
"""2: commits carry the functions their hunks changed. 3: the commit list was read field by
field (NUL-ended), so no message or file name could forge a commit. An older file is still read
(a version-1 file's commits without functions) until the next refresh mines the history again."""
READABLE_VERSIONS = (1, 2, 3)


@dataclass(frozen=True)
class History:
    """The commits reachable from ``head``, newest first, or why there are none."""

    head: str = ""
    commits: tuple[Commit, ...] = ()
    note: str = ""
    """Why the history is missing or partial ("" when it is whole)."""
    seconds: float = 0.0
    """How long the last refresh spent reading git."""
    added: int = 0
    """Commits the last refresh read (all of them on a first mining)."""
    version: int = FORMAT_VERSION
    """The stored file's format (an older one is mined again on the next refresh)."""

    @property
    def usable(self) -> bool:
        """Tell whether there is any history to rank with."""
        return bool(self.commits)


def head_of(root: Path) -> str:
    """Return the checkout's HEAD commit, or raise ``HistoryUnavailable``."""
    done = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    sha = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not sha:
        raise HistoryUnavailable("not a git checkout with commits")
    return sha


def _is_ancestor(root: Path, old: str, new: str) -> bool:
    return run_git(root, "merge-base", "--is-ancestor", old, new).returncode == 0


def refresh_history(root: Path, folder: Path, *, stored: History | None = None) -> History:
    """Mine the history of ``root`` into ``folder`` (only new commits when it moved forward).

    ``stored`` is the history the caller last got for ``folder`` (it saves reading the file).
    Never raises for a missing, shallow, failing or slow git: the history comes back empty
    with a note, and is stored so the next search does not try again until HEAD changes.
    """
    started = time.perf_counter()
    try:
        head = head_of(root)
        if stored is None or stored.head != head:
            stored = load_history(folder)
        if stored is not None and stored.version != FORMAT_VERSION:
            stored = None  # an older format: mine everything again
        if stored is not None and stored.head == head:
            return replace(stored, seconds=time.perf_counter() - started, added=0)
        since = ""
        if stored is not None and stored.usable and _is_ancestor(root, stored.head, head):
            since = stored.head
        new = parse_log(git_log(root, since=since))
        new, functions_note = _with_functions(root, new)
    except HistoryInterrupted as err:  # not stored: the next refresh tries again
        return History(note=str(err), seconds=time.perf_counter() - started)
    except HistoryUnavailable as err:
        history = History(note=str(err), seconds=time.perf_counter() - started)
        save_history(folder, history)
        return history
    older = stored.commits if since and stored is not None else ()
    commits = (*new, *older)[:MAX_COMMITS]
    note = ""
    if len(new) >= MAX_COMMITS or (older and len(new) + len(older) > MAX_COMMITS):
        note = f"history cut to the newest {MAX_COMMITS:,} commits"
    if not commits:
        note = "no commits touch this folder"
    note = "; ".join(filter(None, (note, functions_note)))
    history = History(head, commits, note, time.perf_counter() - started, len(new))
    save_history(folder, history)
    return history


def _with_functions(root: Path, commits: list[Commit]) -> tuple[list[Commit], str]:
    """Add the functions each of the newest non-bulk commits changed (``git_functions``)."""
    wanted = [c.sha for c in commits if 0 < c.size <= BULK_FILES][:FUNCTION_COMMITS]
    found, note = git_functions(root, wanted)
    return [
        replace(c, functions=tuple((p, tuple(n)) for p, n in found[c.sha].items()))
        if c.sha in found
        else c
        for c in commits
    ], note


def save_history(folder: Path, history: History) -> None:
    """Write the history file atomically."""
    from engram.stores.files import write_atomically

    data = {
        "version": FORMAT_VERSION,
        "head": history.head,
        "note": history.note,
        "seconds": round(history.seconds, 3),
        "added": history.added,
        "commits": [
            [
                c.sha,
                c.time,
                c.message,
                list(c.files),
                [list(r) for r in c.renames],
                c.size,
                {path: list(names) for path, names in c.functions},
            ]
            for c in history.commits
        ],
    }
    write_atomically(folder / HISTORY_FILE, json.dumps(data, separators=(",", ":")).encode())


def load_history(folder: Path) -> History | None:
    """Read the stored history; None when there is none or it is unreadable or outdated."""
    try:
        data = json.loads((folder / HISTORY_FILE).read_text(encoding="utf-8"))
        version = data.get("version")
        if version not in READABLE_VERSIONS:
            return None
        commits = tuple(
            Commit(
                str(sha),
                int(stamp),
                str(message),
                tuple(map(str, files)),
                tuple((str(a), str(b)) for a, b in renames),
                int(size),
                tuple((str(p), tuple(map(str, names))) for p, names in functions.items()),
            )
            for sha, stamp, message, files, renames, size, functions in (
                row if len(row) == 7 else (*row, {}) for row in data["commits"]
            )
        )
        return History(
            str(data["head"]),
            commits,
            str(data.get("note", "")),
            float(data.get("seconds", 0.0)),
            int(data.get("added", 0)),
            int(version),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None
