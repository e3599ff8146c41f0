"""Exact-string replacement with helpful misses, and unified diffs of proposed file changes."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from engram.graph._errors import ToolError

CANDIDATES_SHOWN = 3
"""Nearest candidate passages named when an ``old_string`` is not found."""
CANDIDATE_MIN_RATIO = 0.5
"""Similarity below which a passage is not offered as a candidate."""
CANDIDATE_SCAN_LINES = 20_000
"""Files longer than this are not scanned for candidates (the scan is quadratic-ish)."""
CANDIDATE_LINE_CHARS = 160
"""Characters of each candidate line shown."""


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after a proposed change (None: absent)."""

    path: str
    """Posix path relative to the project root."""
    target: Path
    """The resolved absolute path, inside the project."""
    before: str | None
    after: str | None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def nearest_candidates(text: str, wanted: str, limit: int = CANDIDATES_SHOWN) -> list[str]:
    """Return the passages of ``text`` most like ``wanted``, as numbered lines, best first."""
    lines = text.splitlines()
    size = max(1, len(wanted.strip("\n").splitlines()))
    if not lines or len(lines) > CANDIDATE_SCAN_LINES:
        return []
    target = "\n".join(line.strip() for line in wanted.strip("\n").splitlines())
    scored: list[tuple[float, int]] = []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in range(0, max(1, len(lines) - size + 1)):
        window = "\n".join(line.strip() for line in lines[start : start + size])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() < CANDIDATE_MIN_RATIO:
            continue
        if matcher.quick_ratio() < CANDIDATE_MIN_RATIO:
            continue
        ratio = matcher.ratio()
        if ratio >= CANDIDATE_MIN_RATIO:
            scored.append((ratio, start))
    scored.sort(key=lambda item: (-item[0], item[1]))
    shown: list[str] = []
    taken: set[int] = set()
    for _, start in scored:
        if any(abs(start - other) < size for other in taken):
            continue
        taken.add(start)
        block = lines[start : start + size]
        shown.append(
            "\n".join(
                f"{start + i + 1:>6}\t{line[:CANDIDATE_LINE_CHARS]}" for i, line in enumerate(block)
            )
        )
        if len(shown) == limit:
            break
    return shown


def _not_found(text: str, old: str, path: str) -> ToolError:
    hint = "read the file again and copy the exact text, including indentation"
    squeezed = " ".join(old.split())
    if squeezed and squeezed in " ".join(text.split()):
        hint = "the text is there with different whitespace or line breaks; " + hint
    candidates = nearest_candidates(text, old)
    if candidates:
        listing = "\n---\n".join(candidates)
        return ToolError(
            f"old_string was not found in {path}; nearest candidates:\n{listing}", hint=hint
        )
    return ToolError(f"old_string was not found in {path} (nothing similar either)", hint=hint)


def replace_exact(
    text: str, old: str, new: str, *, replace_all: bool = False, path: str = "the file"
) -> tuple[str, int]:
    """Replace ``old`` by ``new`` in ``text``; return the new text and the replacements made.

    A file with CRLF line ends is matched and edited with CRLF even when the strings use LF.

    Raises:
        ToolError: ``old`` is empty, equals ``new``, is missing (the message lists the nearest
            candidate lines), or matches more than once without ``replace_all`` (the message
            lists the line numbers).
    """
    if not old:
        raise ToolError(
            "old_string is empty", hint="use write_file to create a file or replace all of it"
        )
    if old == new:
        raise ToolError("old_string and new_string are the same: nothing would change")
    if "\r\n" in text and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        raise _not_found(text, old, path)
    if count > 1 and not replace_all:
        starts: list[int] = []
        offset = text.find(old)
        while offset != -1:
            starts.append(_line_of(text, offset))
            offset = text.find(old, offset + 1)
        raise ToolError(
            f"old_string matches {count} times in {path} (at lines "
            f"{', '.join(map(str, starts[:10]))}{', …' if len(starts) > 10 else ''})",
            hint="include more surrounding lines so it matches once, or pass replace_all=true",
        )
    return text.replace(old, new), count


def render_diff(changes: list[FileChange]) -> str:
    """Return one unified diff (``a/`` and ``b/`` paths) for all the changes."""
    parts: list[str] = []
    for change in changes:
        before = (change.before or "").splitlines(keepends=True)
        after = (change.after or "").splitlines(keepends=True)
        old_name = "/dev/null" if change.before is None else f"a/{change.path}"
        new_name = "/dev/null" if change.after is None else f"b/{change.path}"
        lines = list(difflib.unified_diff(before, after, old_name, new_name))
        parts.append(
            "".join(
                line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                for line in lines
            )
        )
    return "".join(parts)
