"""Exact code search: ripgrep from the ``ripgrep`` package, with a pure-Python fallback."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from stores.errors import StoreError
from stores.paths import SECRET_PATTERNS, SKIP_DIRS, is_secret_path
from stores.walk import read_text, walk_project

__all__ = ["GrepMatch", "InvalidPatternError", "find_rg", "grep"]

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
) -> list[GrepMatch]:
    """Search the project for ``pattern`` and return matches sorted by path and line.

    Args:
        root: Project root; results are relative to it.
        pattern: A regular expression (Rust/PCRE-lite syntax) or, with ``literal``, plain text.
        literal: Treat ``pattern`` as fixed text.
        ignore_case: Match case-insensitively.
        max_results: Stop after this many matching lines.
        glob: Optional file glob (``*.py``, ``src/**/*.ts``) restricting the files searched.
        rg_path: ripgrep binary; "auto" finds it, None forces the Python fallback.

    Raises:
        InvalidPatternError: The regex does not compile.
    """
    root = root.resolve()
    binary = find_rg() if rg_path == "auto" else rg_path
    if binary:
        return _grep_rg(binary, root, pattern, literal, ignore_case, max_results, glob)
    return _grep_python(root, pattern, literal, ignore_case, max_results, glob)


def _grep_rg(
    binary: str,
    root: Path,
    pattern: str,
    literal: bool,
    ignore_case: bool,
    max_results: int,
    glob: str | None,
) -> list[GrepMatch]:
    args = [binary, "--json", "--no-config", "--max-columns", str(MAX_LINE_CHARS * 2)]
    args += ["--max-filesize", "1M", "--hidden", "--no-require-git"]
    engram_ignore = root / ".engram" / "ignore"
    if engram_ignore.is_file():
        args += ["--ignore-file", str(engram_ignore)]
    if literal:
        args.append("--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    for name in sorted(SKIP_DIRS):
        args += ["--glob", f"!**/{name}/**"]
    for secret in SECRET_PATTERNS:
        args += ["--glob", f"!{secret}"]
    if glob:
        args += ["--glob", glob]
    args += ["--regexp", pattern, "--", "."]
    proc = subprocess.run(
        args, cwd=root, capture_output=True, timeout=RG_TIMEOUT_S, check=False
    )
    if proc.returncode == 2 and not proc.stdout:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InvalidPatternError(f"invalid search pattern {pattern!r}: {' '.join(message[-3:])}")
    matches: list[GrepMatch] = []
    for raw in proc.stdout.splitlines():
        event = json.loads(raw)
        if event.get("type") != "match":
            continue
        data = event["data"]
        path = data["path"].get("text")
        text = data["lines"].get("text")
        if path is None or text is None:
            continue
        path = path[2:] if path.startswith("./") else path
        if is_secret_path(path):
            continue
        matches.append(GrepMatch(path, int(data["line_number"]), _clip(text)))
    matches.sort(key=lambda m: (m.path, m.line))
    return matches[:max_results]


def _grep_python(
    root: Path,
    pattern: str,
    literal: bool,
    ignore_case: bool,
    max_results: int,
    glob: str | None,
) -> list[GrepMatch]:
    flags = re.IGNORECASE if ignore_case else 0
    try:
        regex = re.compile(re.escape(pattern) if literal else pattern, flags)
    except re.error as exc:
        raise InvalidPatternError(f"invalid search pattern {pattern!r}: {exc}") from None
    matches: list[GrepMatch] = []
    for file in walk_project(root).files:
        if glob and not (fnmatch.fnmatch(file.path, glob) or fnmatch.fnmatch(
            Path(file.path).name, glob
        )):
            continue
        try:
            lines = read_text(file.abs_path).splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            if regex.search(line):
                matches.append(GrepMatch(file.path, number, _clip(line)))
                if len(matches) >= max_results:
                    return matches
    return matches


def _clip(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + " …"
