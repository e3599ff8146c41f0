"""Read a checkout's commits reachable from HEAD with ``git log``, as bounded, checked records.

Only ``HEAD`` is walked: other refs, stashes and unreachable objects may hold work that is not
the checkout's past (in a benchmark, the future of the fix). git runs through engram's plumbing
helper (no hooks, monitor or filters), with every setting that could start a program or a
signature check turned off, a time limit and a commit cap. What git prints is data from the
repository: a record whose hash or time is malformed is dropped, paths that leave the tree are
dropped, messages and path lists are cut to fixed sizes.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_COMMITS = 20_000
"""Commits read at most, newest first: older ones say little about today's code."""
GIT_TIMEOUT_S = 30.0
"""Seconds ``git log`` may run before the history is given up (today's ranking is kept)."""
MAX_MESSAGE_CHARS = 1_000
"""A commit message is cut to this many characters (subjects and first paragraphs matter)."""
MAX_PATH_CHARS = 1_024
"""A path longer than this is dropped (no real source file has one)."""
MAX_FILES_KEPT = 200
"""Paths kept per commit; a commit touching more is bulk anyway (only its size is kept)."""
EXACT_RENAMES = "100%"
"""Renames are followed when the content did not change: found by comparing object ids, so git
reads no file content (a mirror or a partial clone may lack blobs; reading one could fetch it)."""
RENAME_LIMIT = 1_000
"""git's rename detection gives up on commits with more files than this."""
LOG_SETTINGS = (
    "-c",
    "log.showSignature=false",
    "-c",
    f"diff.renameLimit={RENAME_LIMIT}",
    "-c",
    "core.quotePath=false",
)
"""No signature checks (they start gpg), bounded rename detection, paths as bytes."""
NO_FETCH = {"GIT_NO_LAZY_FETCH": "1"}
"""A partial clone must not fetch missing objects from its remote while engram reads it."""
PARTIAL_CLONE_KEYS = r"^(extensions\.partialclone|remote\..*\.promisor)$"
"""Settings that make a clone partial: objects it lacks are fetched on demand."""
RECORD = "\x1e"
FIELD = "\x1f"
_HASH = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


@dataclass(frozen=True)
class Commit:
    """One commit: when, what it said, which files it touched (paths as of that commit)."""

    sha: str
    time: int
    """Committer time, seconds since the epoch."""
    message: str
    files: tuple[str, ...]
    """Paths the commit added, modified or deleted; for a rename, the new path."""
    renames: tuple[tuple[str, str], ...] = ()
    """(old path, new path) for each file the commit renamed."""
    size: int = 0
    """How many files the commit touched (``files`` may be cut shorter)."""


class HistoryUnavailable(Exception):
    """The checkout has no usable history; the message says why, for a note."""


def git_log(root: Path, *, since: str = "", limit: int = MAX_COMMITS) -> str:
    """Return ``git log`` of HEAD (after ``since`` when given) with messages and changed files.

    Raises:
        HistoryUnavailable: git is missing or failed, the checkout is not a git work tree, it
            is a shallow clone, or git ran past ``GIT_TIMEOUT_S``.
    """
    check = run_git(root, "rev-parse", "--is-shallow-repository", "--verify", "HEAD")
    answer = check.stdout.decode(errors="replace").split()
    if check.returncode != 0 or not answer:
        raise HistoryUnavailable("not a git checkout with commits")
    if answer[0] == "true":
        raise HistoryUnavailable("a shallow clone (its history is cut)")
    promisor = run_git(root, "config", "--get-regexp", PARTIAL_CLONE_KEYS)
    if promisor.returncode == 0 and promisor.stdout.strip():
        # older git has no GIT_NO_LAZY_FETCH: a missing tree would be fetched from the remote
        raise HistoryUnavailable("a partial clone (reading its history could use the network)")
    span = f"{since}..HEAD" if since else "HEAD"
    done = run_git(
        root,
        *LOG_SETTINGS,
        "log",
        span,
        f"--max-count={limit}",
        "--no-show-signature",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--no-mailmap",
        "--relative",
        f"--find-renames={EXACT_RENAMES}",
        "--name-status",
        "-z",
        f"--format={RECORD}%H{FIELD}%ct{FIELD}%B{FIELD}",
        "--",
    )
    if done.returncode != 0:
        raise HistoryUnavailable("git log failed: " + done.stderr.decode(errors="replace")[:200])
    return done.stdout.decode("utf-8", errors="replace")


def run_git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run a git plumbing command in ``root`` with the time limit; raise ``HistoryUnavailable``."""
    from engram.stores.files import run_plumbing

    try:
        return run_plumbing(root, *args, env=NO_FETCH, timeout=GIT_TIMEOUT_S)
    except OSError as err:
        raise HistoryUnavailable(f"git could not run ({err.strerror or err})") from err
    except subprocess.TimeoutExpired as err:
        raise HistoryUnavailable(f"git log took over {GIT_TIMEOUT_S:.0f} s") from err


def parse_log(text: str) -> list[Commit]:
    """Parse ``git_log`` output into commits, newest first, dropping malformed records."""
    out = []
    for record in text.split(RECORD):
        head, sep, changes = record.rpartition(FIELD)
        if not sep:
            continue
        sha, _, rest = head.partition(FIELD)
        stamp, _, message = rest.partition(FIELD)
        if not _HASH.fullmatch(sha) or not stamp.isdigit():
            continue
        files, renames, size = _changes(changes)
        out.append(
            Commit(
                sha,
                int(stamp),
                message.strip()[:MAX_MESSAGE_CHARS],
                tuple(files),
                tuple(renames),
                size,
            )
        )
    return out


def _changes(text: str) -> tuple[list[str], list[tuple[str, str]], int]:
    """Read ``--name-status -z`` fields: a status, then one path (two for renames and copies)."""
    fields = text.lstrip("\n\0").split("\0")
    files: list[str] = []
    renames: list[tuple[str, str]] = []
    size = 0
    i = 0
    while i < len(fields):
        status = fields[i].strip()
        if not status:
            i += 1
            continue
        two = status[0] in "RC"
        paths = fields[i + 1 : i + (3 if two else 2)]
        i += 3 if two else 2
        if not paths or not all(map(_safe_path, paths)):
            continue
        size += 1
        if len(files) < MAX_FILES_KEPT:
            files.append(paths[-1])
        if status[0] == "R" and len(paths) == 2 and len(renames) < MAX_FILES_KEPT:
            renames.append((paths[0], paths[1]))
    return files, renames, size


def _safe_path(path: str) -> bool:
    """Tell whether a path from history is a plain relative path inside the tree."""
    if not path or len(path) > MAX_PATH_CHARS or "\ufffd" in path:
        return False
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts and "\\" not in path
