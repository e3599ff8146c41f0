"""Exact code search: ripgrep from the ``ripgrep`` package, with a pure-Python fallback."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from engram.stores._errors import StoreError
from engram.stores.codeindex._ignore_check import IgnoreFileCheck, unsafe_ignore_file
from engram.stores.files import (
    SECRET_NAME_PATTERNS,
    SECRET_PATH_PATTERNS,
    SKIP_DIRS,
    listable,
    read_text,
    walk_project,
)

DEFAULT_MAX_RESULTS = 200
MAX_LINE_CHARS = 400
RG_TIMEOUT_S = 30.0


class InvalidPatternError(StoreError, ValueError):
    """The search pattern is not a valid regular expression."""

    hint = "escape regex characters or search with literal=True (--literal)"


@dataclass(frozen=True)
class GrepMatch:
    """One matching line."""

    path: str
    """Posix path relative to the project root."""
    line: int
    text: str


def find_rg() -> str | None:
    """Return the ripgrep binary shipped next to this interpreter, or one on PATH."""
    local = Path(sys.executable).parent / "rg"
    if local.is_file():
        return str(local)
    return shutil.which("rg")


def grep(
    root: Path,
    pattern: str,
    *,
    literal: bool = False,
    ignore_case: bool = False,
    max_results: int = DEFAULT_MAX_RESULTS,
    glob: str | None = None,
    rg_path: str | None = "auto",
    ignore_check: IgnoreFileCheck | None = None,
) -> list[GrepMatch]:
    """Search the project for ``pattern`` and return matches sorted by path and line.

    With more than ``max_results`` matching lines, the first ones in path order are kept, so
    the same tree and pattern always give the same lines.

    Args:
        root: Project root; results are relative to it.
        pattern: A regular expression (Rust/PCRE-lite syntax) or, with ``literal``, plain text.
        literal: Treat ``pattern`` as fixed text.
        ignore_case: Match case-insensitively.
        max_results: Stop after this many matching lines (ripgrep is stopped early).
        glob: Optional file glob (``*.py``, ``src/**/*.ts``) restricting the files searched.
        rg_path: ripgrep binary; "auto" finds it, None forces the Python fallback.
        ignore_check: Remembers trees already found free of ignore files ripgrep cannot
            open safely (a FIFO ``.gitignore`` would hang it; such a tree is searched by the
            Python fallback, which opens only regular files); None lists the tree each time.

    Raises:
        InvalidPatternError: The regex does not compile.
        subprocess.TimeoutExpired: ripgrep ran longer than RG_TIMEOUT_S.
    """
    root = root.resolve()
    binary = find_rg() if rg_path == "auto" else rg_path
    check = ignore_check.unsafe if ignore_check is not None else unsafe_ignore_file
    if binary and not check(root):
        return _grep_rg(binary, root, pattern, literal, ignore_case, max_results, glob)
    return _grep_python(root, Query(pattern, literal, ignore_case, max_results, glob))


def _grep_rg(
    binary: str,
    root: Path,
    pattern: str,
    literal: bool,
    ignore_case: bool,
    max_results: int,
    glob: str | None,
) -> list[GrepMatch]:
    """Run ripgrep and keep the first ``max_results`` matching lines, sorted by path and line.

    ripgrep's output is read as it comes and ripgrep is stopped once the limit is passed, so
    a very common pattern costs no more than a rare one. The first run walks the tree in
    parallel (unordered); when it finds more lines than the limit, which ones it kept would
    depend on thread timing, so the search is run again in path order (``--sort path``,
    single-threaded, stopped at the limit). Either way the same tree and pattern give the
    same lines.
    """
    if max_results <= 0:
        return []
    args = _rg_args(binary, root, pattern, literal, ignore_case, glob)
    matches = _run_rg(args, root, pattern, max_results + 1)
    if len(matches) > max_results:
        matches = _run_rg([args[0], "--sort", "path", *args[1:]], root, pattern, max_results)
    matches.sort(key=lambda m: (m.path, m.line))
    return matches[:max_results]


def _rg_args(
    binary: str, root: Path, pattern: str, literal: bool, ignore_case: bool, glob: str | None
) -> list[str]:
    args = [binary, "--json", "--no-config", "--max-filesize", "1M"]
    args += ["--hidden", "--no-require-git"]
    engram_ignore = root / ".engram" / "ignore"
    if engram_ignore.is_file() and not engram_ignore.is_symlink():  # never a link, as git
        args += ["--ignore-file", str(engram_ignore)]
    if literal:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    if glob:
        # ripgrep lets the last matching --glob win, so the caller's glob goes first and the
        # exclusions after it can never be overridden.
        args += ["--glob", glob]
    args.append("--glob-case-insensitive")
    for name in sorted(SKIP_DIRS):
        args += ["--glob", f"!**/{name}/**"]
    args += ["--glob", "!**/*.egg-info/**"]
    for secret in SECRET_NAME_PATTERNS:
        args += ["--glob", f"!{secret}"]
    for secret in SECRET_PATH_PATTERNS:
        args += ["--glob", f"!**/{secret}"]
    return [*args, "--regexp", pattern, "--", "."]


def _run_rg(args: list[str], root: Path, pattern: str, max_results: int) -> list[GrepMatch]:
    """Stream ripgrep's JSON events and stop ripgrep once ``max_results`` lines are read.

    Raises:
        InvalidPatternError: ripgrep rejected the pattern.
        subprocess.TimeoutExpired: ripgrep ran longer than RG_TIMEOUT_S.
    """
    matches: list[GrepMatch] = []
    allowed: dict[str, bool] = {}
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=errors)
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(RG_TIMEOUT_S, expire)
        timer.start()
        output = False
        try:
            for raw in proc.stdout or ():
                output = True
                match = _parse_match(raw, root, allowed)
                if match is not None:
                    matches.append(match)
                    if len(matches) >= max_results:
                        break
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            if proc.stdout is not None:
                proc.stdout.close()
            returncode = proc.wait()
        if expired.is_set():
            raise subprocess.TimeoutExpired(args, RG_TIMEOUT_S)
        if returncode == 2 and not output:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise InvalidPatternError(
                f"invalid search pattern {pattern!r}: {' '.join(message[-3:])}"
            )
    return matches


_MATCH_PREFIX = b'{"type":"match"'


def _parse_match(raw: bytes, root: Path, allowed: dict[str, bool]) -> GrepMatch | None:
    """Return the match an event line reports, or None for other events and refused ones.

    Every path is checked against the project policy (``listable``) whatever ripgrep's own
    filters let through: hard links, protected folders, secrets files.
    """
    if not raw.startswith(_MATCH_PREFIX):
        return None
    data = json.loads(raw)["data"]
    path = data["path"].get("text")
    text = data["lines"].get("text")
    if path is None or text is None:
        return None
    path = path[2:] if path.startswith("./") else path
    if path not in allowed:
        allowed[path] = listable(root, path)
    if not allowed[path]:
        return None
    return GrepMatch(path, int(data["line_number"]), clip_line(text))


CHILD_BOOT = (
    "import json, sys; request = json.load(sys.stdin); sys.path[:] = request.pop('path'); "
    "from engram.stores.codeindex._ripgrep import search_here; search_here(request)"
)
"""How the fallback's child process starts: the parent's ``sys.path``, then ``search_here``."""


@dataclass(frozen=True)
class Query:
    """One search, as ``grep`` takes it (see there)."""

    pattern: str
    literal: bool
    ignore_case: bool
    max_results: int
    glob: str | None


def _grep_python(root: Path, query: Query) -> list[GrepMatch]:
    """Search with Python's ``re`` in a child process, stopped after RG_TIMEOUT_S like ripgrep.

    Python's engine backtracks: a pattern a model writes (``(a+)+b``) can take exponential
    time on one line, and a thread running it cannot be stopped. The child can: it is killed
    at the limit. It starts with ``-P`` in ``/`` and the parent's import path without
    relative entries, so no module a repository ships (``json.py``) is imported in it.

    Raises:
        InvalidPatternError: The regex does not compile.
        subprocess.TimeoutExpired: The search ran longer than RG_TIMEOUT_S.
    """
    _compiled(query)  # a bad pattern fails here, with its message
    request = {
        "path": [p for p in sys.path if p and Path(p).is_absolute()],
        "root": str(root),
        "query": asdict(query),
    }
    args = [sys.executable, "-P", "-c", CHILD_BOOT]
    done = subprocess.run(
        args,
        input=json.dumps(request).encode(),
        capture_output=True,
        cwd="/",
        timeout=RG_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise StoreError(f"the Python search stopped: {' '.join(tail) or done.returncode}")
    return [GrepMatch(path, line, text) for path, line, text in json.loads(done.stdout)]


def search_here(request: dict) -> None:
    """Run one fallback search in this (child) process and write its matches as JSON."""
    matches = _search_python(Path(request["root"]), Query(**request["query"]))
    json.dump([[m.path, m.line, m.text] for m in matches], sys.stdout)


def _compiled(query: Query) -> re.Pattern[str]:
    flags = re.IGNORECASE if query.ignore_case else 0
    pattern = query.pattern
    try:
        return re.compile(re.escape(pattern) if query.literal else pattern, flags)
    except (re.error, RecursionError, OverflowError) as exc:
        raise InvalidPatternError(f"invalid search pattern {pattern!r}: {exc}") from None


def _search_python(root: Path, query: Query) -> list[GrepMatch]:
    """Search with Python's ``re`` in this process (``_grep_python`` runs it in a child)."""
    regex = _compiled(query)
    glob, max_results = query.glob, query.max_results
    matches: list[GrepMatch] = []
    for file in walk_project(root).files:
        if glob and not (
            fnmatch.fnmatch(file.path, glob) or fnmatch.fnmatch(Path(file.path).name, glob)
        ):
            continue
        try:
            lines = read_text(file.abs_path).splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            if regex.search(line):
                matches.append(GrepMatch(file.path, number, clip_line(line)))
                if len(matches) >= max_results:
                    return matches
    return matches


def clip_line(text: str) -> str:
    """Return a line as a match shows it: without its line break, cut at MAX_LINE_CHARS."""
    text = text.rstrip("\r\n")
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + " …"
