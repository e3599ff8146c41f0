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
LOG_OPTIONS = (
    "--no-show-signature",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-mailmap",
    "--relative",
    f"--find-renames={EXACT_RENAMES}",
)
"""``git log`` options of every read: no program started, paths relative to the folder, exact
renames followed."""
NO_FETCH = {"GIT_NO_LAZY_FETCH": "1"}
"""A partial clone must not fetch missing objects from its remote while engram reads it."""
PARTIAL_CLONE_KEYS = r"^(extensions\.partialclone|remote\..*\.promisor)$"
"""Settings that make a clone partial: objects it lacks are fetched on demand."""
BULK_FILES = 30
"""A commit touching more files than this is bulk (reformatting, vendoring, mass renames): it
says nothing about which files or functions belong together, and its hunks are not read."""
FUNCTION_COMMITS = 2_000
"""Newest non-bulk commits whose hunks are read for the functions they changed. Reading hunks
diffs file contents, so it is bounded apart from the commit list: on yt-dlp, 3,000 commits took
2.1 s, which put the whole mining at 20 % of a first index (3.4 of 17 s)."""
FUNCTIONS_PER_FILE = 12
"""Function names kept per file and commit."""
MAX_NAME_CHARS = 200
"""A longer "function name" is not one (a generated or hostile line): it is not kept."""
FUNCTION_DRIVERS = {
    "python": ("py", "pyi", "pyx"),
    "golang": ("go",),
    "rust": ("rs",),
    "java": ("java", "kt", "kts", "scala"),
    "ruby": ("rb",),
    "php": ("php",),
    "cpp": ("c", "h", "cc", "cpp", "hpp", "cxx", "m", "mm"),
    "csharp": ("cs",),
    "": ("js", "jsx", "mjs", "cjs", "ts", "tsx", "vue", "svelte", "swift", "lua"),
}
"""Source files whose hunks are read, by git's own hunk-header pattern (``userdiff``), so a
hunk inside a method names the method ("" is git's default: a line starting a definition)."""
FUNCTION_ATTRIBUTES = "* -diff\n" + "".join(
    f"*.{suffix} diff{'=' + driver if driver else ''}\n"
    for driver, suffixes in FUNCTION_DRIVERS.items()
    for suffix in suffixes
)
"""Passed as ``core.attributesFile``: every other file counts as binary, so git reads no data,
fixture or generated file (most of a history's diff bytes, and the blobs a mirror may lack).
A repository's own attributes still come first, and can only choose another pattern or diff
more files (external diff programs and text conversion stay off)."""
BIG_FILE_BYTES = 1_000_000
"""A file version larger than this counts as binary in the hunk read (git's
``core.bigFileThreshold``): a source file that size is generated, and diffing it costs time."""
MAX_RESTARTS = 20
"""Times git is started again past a commit it could not read (a blob missing from a mirror)."""
_DEFINED = re.compile(
    r"[ \t]*(?:(?:async|export|default|pub(?:\([^)]*\))?|static|public|private|protected"
    r"|abstract|final|override)[ \t]+)*"
    r"(?:def|class|function|func|fn|fun|sub|struct|interface|trait|impl|module)"
    r"[ \t]+(?:\([^)]*\)[ \t]*)?([A-Za-z_$][\w$]*)"
)
"""A line that defines a function or class, and its name (Python, JavaScript, Go, Rust, …)."""
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+")
"""A hunk's old-side line count (absent means 1)."""
_CALLED = re.compile(r"([A-Za-z_$][\w$]*)[ \t]*\(")
RECORD = "\x1e"
"""Starts each commit in the hunk read (``git_functions``), where it can only start a line."""
LOG_FORMAT = "--format=%H%x00%ct%x00%B%x00"
"""The commit list's fields, each ended by a NUL like ``-z``'s paths: git ends a message at its
first NUL, and a path holds none, so no message or file name can forge a field or a commit."""
_STATUS = re.compile(r"[ACDMRTUXB][0-9]{0,3}")
"""A ``--name-status`` letter, with a similarity score for renames and copies."""
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
    functions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(path, names of the functions and classes its hunks changed), for the files whose hunks
    were read (the newest ``FUNCTION_COMMITS`` non-bulk commits)."""


class HistoryUnavailable(Exception):
    """The checkout has no usable history; the message says why, for a note."""


class HistoryInterrupted(HistoryUnavailable):
    """git was stopped by a signal (Ctrl-C, a shutdown): nothing is stored; next time it is read."""


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
        *LOG_OPTIONS,
        "--name-status",
        "-z",
        LOG_FORMAT,
        "--",
    )
    if done.returncode != 0:
        raise HistoryUnavailable("git log failed: " + done.stderr.decode(errors="replace")[:200])
    return done.stdout.decode("utf-8", errors="replace")


def run_git(
    root: Path, *args: str, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run a git plumbing command in ``root`` with the time limit; raise ``HistoryUnavailable``."""
    from engram.stores.files import run_plumbing

    try:
        done = run_plumbing(root, *args, data=data, env=NO_FETCH, timeout=GIT_TIMEOUT_S)
    except OSError as err:
        raise HistoryUnavailable(f"git could not run ({err.strerror or err})") from err
    except subprocess.TimeoutExpired as err:
        raise HistoryUnavailable(f"git log took over {GIT_TIMEOUT_S:.0f} s") from err
    if done.returncode < 0:
        raise HistoryInterrupted(f"git was stopped by signal {-done.returncode}")
    return done


def parse_log(text: str) -> list[Commit]:
    """Parse ``git_log`` output into commits, newest first, dropping malformed records.

    The output is read field by field (NUL-ended): a commit's hash, time and message, then
    its changes, each a status and one path (two for renames and copies), up to the next
    commit's hash (no status is one). Fields are taken by position, so whatever a message or
    a path says is never read as structure; a field out of place ends the read there.
    """
    fields = text.split("\0")
    out: list[Commit] = []
    i = 0
    while i + 2 < len(fields):
        sha, stamp, message = fields[i : i + 3]
        i += 3
        if not _HASH.fullmatch(sha) or not stamp.isdigit():
            break
        files: list[str] = []
        renames: list[tuple[str, str]] = []
        size = 0
        while i < len(fields):
            status = fields[i].lstrip("\n")
            if not status:
                i += 1
                continue
            if not _STATUS.fullmatch(status):  # the next commit's hash, or a field out of place
                break
            two = status[0] in "RC"
            paths = fields[i + 1 : i + (3 if two else 2)]
            i += 3 if two else 2
            if len(paths) != (2 if two else 1) or not all(map(_safe_path, paths)):
                continue
            size += 1
            if len(files) < MAX_FILES_KEPT:
                files.append(paths[-1])
            if status[0] == "R" and len(renames) < MAX_FILES_KEPT:
                renames.append((paths[0], paths[1]))
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


def _safe_path(path: str) -> bool:
    """Tell whether a path from history is a plain relative path inside the tree."""
    if not path or len(path) > MAX_PATH_CHARS or "\ufffd" in path:
        return False
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts and "\\" not in path


def git_functions(root: Path, shas: list[str]) -> tuple[dict[str, dict[str, list[str]]], str]:
    """Read which functions each commit changed, from its hunks (``git log -p -U0``).

    Returns per commit, per path, the names its hunk headers and changed definition lines
    name; and a note when some commits could not be read (a blob missing from a mirror: git
    starts again past that commit, up to ``MAX_RESTARTS`` times) or git ran past its time
    limit: the commits read keep their functions, the rest have none.
    """
    import tempfile

    found: dict[str, dict[str, list[str]]] = {}
    pending = [sha for sha in shas if _HASH.fullmatch(sha)]
    skipped = 0
    with tempfile.NamedTemporaryFile("w", suffix=".gitattributes", encoding="utf-8") as attrs:
        attrs.write(FUNCTION_ATTRIBUTES)
        attrs.flush()
        for _ in range(MAX_RESTARTS + 1):
            if not pending:
                break
            try:
                done = _log_patches(root, attrs.name, pending)
            except HistoryInterrupted:
                raise
            except HistoryUnavailable as err:
                return found, f"functions read for the newest commits only ({err})"
            # a record starts a line; content lines start with + - or a space, so a RECORD
            # character inside a changed line cannot start a record
            text = "\n" + done.stdout.decode("utf-8", errors="replace")
            records = text.split("\n" + RECORD)[1:]
            if done.returncode == 0:
                found.update(filter(None, map(_hunk_functions, records)))
                pending = []
                break
            # git stopped inside the last record's commit: keep the ones before, skip that one
            found.update(filter(None, map(_hunk_functions, records[:-1])))
            failed = records[-1].partition("\n")[0].strip() if records else pending[0]
            if failed not in pending:
                break
            pending = pending[pending.index(failed) + 1 :]
            skipped += 1
    if pending:
        return found, "functions read for the newest commits only (git stopped early)"
    plural = "s" if skipped > 1 else ""
    return found, f"functions of {skipped} commit{plural} not read" if skipped else ""


def _log_patches(
    root: Path, attributes: str, shas: list[str]
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git log -p -U0`` over ``shas`` with engram's diff attributes."""
    return run_git(
        root,
        *LOG_SETTINGS,
        "-c",
        f"core.attributesFile={attributes}",
        "-c",
        f"core.bigFileThreshold={BIG_FILE_BYTES}",
        "log",
        "--stdin",
        "--no-walk=unsorted",
        "-p",
        "-U0",
        *LOG_OPTIONS,
        f"--format={RECORD}%H",
        "--",
        data="".join(f"{sha}\n" for sha in shas).encode(),
    )


def _hunk_functions(record: str) -> tuple[str, dict[str, list[str]]] | None:
    """Parse one commit's ``-U0`` patch into (sha, path to changed function names)."""
    sha, _, patch = record.partition("\n")
    if not _HASH.fullmatch(sha.strip()):
        return None
    out: dict[str, list[str]] = {}
    old = path = ""
    header = False  # inside a file's header lines (after ``diff --git``, before its first hunk)
    context = ""  # the current hunk's header name, credited unless the hunk only adds defs
    added_only = defines = False
    for line in [*patch.split("\n"), "diff --git "]:
        if line.startswith(("diff --git ", "@@")) and path and context:
            if not (added_only and defines):  # new code after a function does not change it
                _add_name(out, path, context)
            context = ""
        if line.startswith("diff --git "):
            header, old, path = True, "", ""
        elif header and line.startswith("--- "):
            old = line[4:]
        elif header and line.startswith("+++ "):
            new = line[4:]
            side = old if new == "/dev/null" else new
            path = side[2:] if side[:2] in ("a/", "b/") and _safe_path(side[2:]) else ""
        elif line.startswith("@@"):
            header = False
            spans = _HUNK.match(line)
            added_only = bool(spans and spans.group(1) == "0")
            defines = False
            context = _defined_name(line.split("@@", 2)[-1]) if path else ""
        elif path and not header and line[:1] in "+-":
            found = _DEFINED.match(line[1:])
            if found:
                defines = True
                _add_name(out, path, found.group(1))
    return sha.strip(), out


def _defined_name(header: str) -> str:
    """The name a hunk header's context line defines (``def name(``, ``func (r) Name(``)."""
    found = _DEFINED.match(header.strip()) or _CALLED.search(header)
    return found.group(1) if found else ""


def _add_name(out: dict[str, list[str]], path: str, name: str) -> None:
    names = out.setdefault(path, [])
    if (
        name
        and len(name) <= MAX_NAME_CHARS
        and name not in names
        and len(names) < FUNCTIONS_PER_FILE
    ):
        names.append(name)
