"""Parse a unified diff and apply its hunks to text, reporting the first hunk that does not fit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engram.graph._errors import ToolError
from engram.graph.tools._text_edits import nearest_candidates

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_EOL = "\\"
HUNK_SHOWN_CHARS = 1_500
"""Characters of a failing hunk quoted back to the model."""


@dataclass
class Hunk:
    """One ``@@`` block: where it claims to start and its prefixed lines."""

    header: str
    old_start: int
    lines: list[str] = field(default_factory=list)
    """Body lines with their ``' '``, ``'-'`` or ``'+'`` prefix, without line ends."""
    old_no_eol: bool = False
    new_no_eol: bool = False

    @property
    def old(self) -> list[str]:
        """Return the lines the file must contain (context and removed)."""
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def new(self) -> list[str]:
        """Return the lines that replace them (context and added)."""
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]

    def text(self) -> str:
        """Return the hunk as it appeared in the patch (capped)."""
        body = "\n".join([self.header, *self.lines])
        return body if len(body) <= HUNK_SHOWN_CHARS else body[:HUNK_SHOWN_CHARS] + "\n[…]"


@dataclass
class FilePatch:
    """The hunks for one file; a None path is ``/dev/null`` (file created or deleted)."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)


def _header_path(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _is_file_header(lines: list[str], index: int) -> bool:
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )


def parse_patch(patch: str) -> list[FilePatch]:
    """Split a unified diff (``git diff`` or ``diff -u`` style) into per-file hunks.

    Hunk line counts are not trusted (models often get them wrong): a hunk runs until the next
    ``@@``, file header or ``diff`` line.

    Raises:
        ToolError: The text holds no file header, or a hunk appears before one.
    """
    lines = patch.replace("\r\n", "\n").split("\n")
    files: list[FilePatch] = []
    hunk: Hunk | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if _is_file_header(lines, index):
            files.append(FilePatch(_header_path(line[4:]), _header_path(lines[index + 1][4:])))
            hunk = None
            index += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not files:
                raise ToolError(
                    "the patch has a hunk before any '--- a/PATH' / '+++ b/PATH' header",
                    hint="send a unified diff with file headers",
                )
            hunk = Hunk(header=line, old_start=int(match.group(1)))
            files[-1].hunks.append(hunk)
        elif hunk is not None and line.startswith(_NO_EOL):
            last = hunk.lines[-1][:1] if hunk.lines else " "
            hunk.old_no_eol |= last in (" ", "-")
            hunk.new_no_eol |= last in (" ", "+")
        elif hunk is not None and line[:1] in (" ", "-", "+"):
            hunk.lines.append(line)
        elif hunk is not None and line == "" and index < len(lines) - 1:
            hunk.lines.append(" ")  # an empty context line whose leading space was trimmed
        else:
            hunk = None  # "diff --git", "index …", mode lines and prose between files
        index += 1
    if not files:
        raise ToolError(
            "no file headers found in the patch",
            hint="send a unified diff: '--- a/PATH', '+++ b/PATH', then @@ hunks",
        )
    for file in files:
        while file.hunks and file.hunks[-1].lines and file.hunks[-1].lines[-1] == " ":
            file.hunks[-1].lines.pop()  # trailing blank lines at the end of the patch text
    return files


def _find(lines: list[str], block: list[str], expected: int, floor: int) -> int | None:
    """Return where ``block`` occurs in ``lines`` at or after ``floor``, nearest ``expected``."""
    if not block:
        return max(floor, min(expected, len(lines)))
    last = len(lines) - len(block)
    expected = max(floor, min(expected, last))
    for distance in range(0, len(lines) + 1):
        for start in (expected - distance, expected + distance):
            if floor <= start <= last and lines[start : start + len(block)] == block:
                return start
        if expected - distance < floor and expected + distance > last:
            break
    return None


def apply_file_patch(before: str | None, patch: FilePatch, *, path: str) -> str | None:
    """Apply one file's hunks to its text; return the new text (None when the file is deleted).

    Raises:
        ToolError: The file's existence does not match the patch, or a hunk's context and
            removed lines are not in the file (the message quotes that hunk and the nearest
            passages of the file).
    """
    if patch.old_path is None and before is not None:
        raise ToolError(
            f"the patch creates {path}, but it already exists",
            hint="diff against the current file, or use write_file",
        )
    if patch.old_path is not None and before is None:
        raise ToolError(f"the patch changes {path}, which does not exist")
    text = before or ""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    ends_with_newline = text.endswith(("\n", "\r")) or not text
    floor = shift = 0
    for number, hunk in enumerate(patch.hunks, 1):
        block = hunk.old
        expected = hunk.old_start + shift - (1 if block else 0)
        start = _find(lines, block, expected, floor)
        if start is None:
            near = nearest_candidates(text, "\n".join(block))
            nearest = ("\nnearest passages of the file:\n" + "\n---\n".join(near)) if near else ""
            raise ToolError(
                f"hunk {number} of {len(patch.hunks)} for {path} does not apply: its context "
                f"and removed lines are not in the file\n{hunk.text()}{nearest}",
                hint="read the file again and rebuild the patch from its current text; "
                "nothing was changed",
            )
        if start + len(block) == len(lines):
            ends_with_newline = not hunk.new_no_eol
        lines[start : start + len(block)] = hunk.new
        floor = start + len(hunk.new)
        shift += len(hunk.new) - len(block)
    if patch.new_path is None:
        return None
    body = newline.join(lines)
    return body + newline if lines and ends_with_newline else body
