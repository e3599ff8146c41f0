"""``read_file``'s reader: numbered lines of a project file, streamed within fixed caps."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engram.graph._errors import PathOutsideProjectError, ToolError
from engram.stores.files import (
    PathEscapeError,
    UnsafeFileError,
    confine,
    display_path,
    open_regular,
)

READ_MAX_LINES = 2_000
"""Most lines one call returns."""
READ_MAX_CHARS = 60_000
"""Most characters one call returns; a longer single line is paged with ``start_char``."""
PIECE_CHARS = 65_536
"""Characters read at a time, so memory stays bounded even on a file that is one huge line."""
BINARY_SNIFF_BYTES = 8192
LINE_PREFIX_CHARS = 8
"""Width of the ``{number:>6}\\t`` prefix counted against the cap."""


def _pieces(text: io.TextIOBase) -> Iterator[tuple[int, int, str, bool]]:
    """Yield (line number, offset in the line, text, line ends here) in bounded pieces."""
    number, offset = 1, 0
    while piece := text.readline(PIECE_CHARS):
        ends = piece.endswith("\n")
        body = piece[:-1] if ends else piece
        yield number, offset, body, ends
        if ends:
            number, offset = number + 1, 0
        else:
            offset += len(body)


@dataclass
class _Page:
    """What one call shows: whole lines, or part of a single line too long for the cap."""

    first: int
    stop: int
    skip: int
    out: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    used: int = 0
    last: int = 0
    """Last line shown in full."""
    cut: tuple[int, int, int] | None = None
    """(line, first character shown, character where the output stopped) of a cut line."""
    stopped: bool = False
    total: int = 0
    line_chars: dict[int, int] = field(default_factory=dict)

    def take(self, number: int, offset: int, body: str, ends: bool) -> None:
        self.total = number
        if number in (self.first, self._cut_line):
            self.line_chars[number] = offset + len(body)
        if self.stopped or not self.first <= number <= self.stop:
            return
        if not self.pending and offset == 0:
            self.used += LINE_PREFIX_CHARS
        start = max(0, self.skip - offset) if number == self.first else 0
        part = body[start:]
        room = READ_MAX_CHARS - self.used
        if len(part) > room:
            if self.out:  # a later line that does not fit: stop before it
                self.pending, self.stopped = [], True
                return
            self.pending.append(part[:room])
            shown_from = self.skip if number == self.first else 0
            self.cut = (number, shown_from, offset + start + room)
            self._flush(number)
            self.stopped = True
            return
        self.pending.append(part)
        self.used += len(part)
        if ends:
            self._flush(number)
            self.last = number

    @property
    def _cut_line(self) -> int:
        return self.cut[0] if self.cut else -1

    def finish(self) -> None:
        if self.pending and not self.stopped:
            self._flush(self.total)
            self.last = self.total

    def _flush(self, number: int) -> None:
        self.out.append(f"{number:>6}\t{''.join(self.pending)}")
        self.pending = []


def confined_path(root: Path, path: str) -> Path:
    """Resolve a model-supplied path inside ``root`` under the shared confinement policy.

    Raises:
        PathOutsideProjectError: The path leaves the project or names a protected folder
            (``.git/``, ``.engram/``, …) or a secrets file.
    """
    try:
        return confine(root, path)
    except PathEscapeError as exc:
        raise PathOutsideProjectError(f"refused: {exc}") from None


def read_project_file(
    root: Path,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
    start_char: int | None = None,
    *,
    shown_as: str = "",
) -> str:
    """Return numbered lines of a project file, capped, with a note saying how to go on.

    The file is streamed in bounded pieces, so neither a huge file nor a huge single line
    is ever held in memory; a line longer than the cap is shown in parts, continued with
    ``start_char``.

    Args:
        root: The resolved project root.
        path: Path relative to the root.
        start_line: First line (1-based).
        end_line: Last line (inclusive).
        start_char: Character of ``start_line`` to start from (0-based), to page through a
            line longer than the cap.
        shown_as: A prefix for the name shown (a session's spilled outputs, read from
            engram's state folder as ``root``, are shown by the name the model knows).

    Raises:
        PathOutsideProjectError: The path leaves the project or names a protected file.
        ToolError: The file does not exist, is a folder, binary or not a regular file, or
            the start is past the end.
    """
    target = confined_path(root, path)
    shown = display_path(shown_as + path)
    if not target.exists():
        raise ToolError(f"no such file: {shown}")
    if target.is_dir():
        raise ToolError(f"{shown} is a folder; use glob_files to list it")
    try:
        handle = open_regular(target)
    except UnsafeFileError as exc:
        raise ToolError(f"refused: {exc}") from None
    first = max(1, start_line or 1)
    page = _Page(
        first,
        min(end_line or first + READ_MAX_LINES - 1, first + READ_MAX_LINES - 1),
        max(0, start_char or 0),
    )
    with handle:
        if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"{shown} is a binary file")
        handle.seek(0)
        text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace")
        for number, offset, body, ends in _pieces(text):
            page.take(number, offset, body, ends)
        page.finish()
    return _render(display_path(shown_as + target.relative_to(root).as_posix()), page, end_line)


def _render(name: str, page: _Page, end_line: int | None) -> str:
    total = page.total
    if total and page.first > total:
        raise ToolError(f"{name} has {total} lines; start_line {page.first} is past the end")
    if page.cut is not None:
        line, begin, stop = page.cut
        length = page.line_chars.get(line, stop)
        header = f"{name} (line {line} of {total}, characters {begin}-{stop} of {length})"
        hint = (
            f"[… line {line} continues for {length - stop:,} more characters; call "
            f"read_file with start_line={line} and start_char={stop}]"
        )
        return "\n".join([header, *page.out, hint])
    if page.skip and page.first <= total and page.skip >= page.line_chars.get(page.first, 0):
        raise ToolError(
            f"line {page.first} of {name} has {page.line_chars.get(page.first, 0)} "
            f"characters; start_char {page.skip} is past its end"
        )
    last = page.last if page.out else page.first - 1
    lines = list(page.out)
    if last < total and (end_line is None or last < end_line):
        lines.append(f"[… {total - last} more lines; call read_file with start_line={last + 1}]")
    return f"{name} (lines {page.first}-{last} of {total})\n" + "\n".join(lines)
