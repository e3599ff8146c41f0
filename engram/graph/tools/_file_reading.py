"""``read_file``'s reader: numbered lines of a project file, streamed within fixed caps."""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engram.graph._errors import PathOutsideProjectError, ToolError
from engram.stores import CONTEXT_LINES, MAX_LINE_CHARS, key_open_after, redact_window
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
    """What one call shows: whole lines, or part of a single line too long for the cap.

    It also keeps what redacting the shown lines among their neighbours needs
    (``redact``): the CONTEXT_LINES lines on each side, and whether a private-key block is
    open above them.
    """

    first: int
    stop: int
    skip: int
    out: list[tuple[int, str]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    used: int = 0
    last: int = 0
    """Last line shown in full."""
    cut: tuple[int, int, int] | None = None
    """(line, first character shown, character where the output stopped) of a cut line."""
    stopped: bool = False
    total: int = 0
    line_chars: dict[int, int] = field(default_factory=dict)
    before: deque[tuple[bool, str]] = field(default_factory=lambda: deque(maxlen=CONTEXT_LINES))
    """The lines just above the page, each with whether a key block was open above it."""
    after: list[str] = field(default_factory=list)
    """The lines just below the page."""
    key_open: bool = False
    """Whether a private-key block is open after the lines read so far."""
    key_open_at_first: bool = False
    line_text: list[str] = field(default_factory=list)
    """The line being read, up to MAX_LINE_CHARS."""

    def take(self, number: int, offset: int, body: str, ends: bool) -> None:
        self._read(number, offset, body, ends)
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
        if self.line_text:
            self._line_read(self.total, "".join(self.line_text))
        if self.pending and not self.stopped:
            self._flush(self.total)
            self.last = self.total

    def redact(self, code: bool) -> None:
        """Redact the shown lines among their neighbours, one line out for each line in.

        A page that shows part of a line (``start_char``, or a line longer than the cap) is
        left to the redaction of the whole output.
        """
        if not self.out or self.cut is not None or self.skip:
            return
        above = [text for _, text in self.before]
        in_key = self.before[0][0] if self.before else self.key_open_at_first
        window = [*above, *(text for _, text in self.out), *self.after]
        texts = redact_window(window, code=code, in_key=in_key)[len(above) :]
        self.out = [(number, texts[i]) for i, (number, _) in enumerate(self.out)]

    def _read(self, number: int, offset: int, body: str, ends: bool) -> None:
        if offset == 0:
            self.line_text = []
        room = MAX_LINE_CHARS - sum(map(len, self.line_text))
        if room > 0:
            self.line_text.append(body[:room])
        if ends:
            self._line_read(number, "".join(self.line_text))
            self.line_text = []

    def _line_read(self, number: int, text: str) -> None:
        if number < self.first:
            self.before.append((self.key_open, text))
        elif number == self.first:
            self.key_open_at_first = self.key_open
        elif number > self.stop or (self.stopped and number > self.last):
            if len(self.after) < CONTEXT_LINES:
                self.after.append(text)
        self.key_open = key_open_after(self.key_open, text)

    def _flush(self, number: int) -> None:
        self.out.append((number, "".join(self.pending)))
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
    code: bool = False,
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
        code: Redact the lines as source code (``redact_secrets``). The lines shown are
            redacted among the file's lines around them, so a credential that starts above
            the page, or runs past a line's end, is hidden too.

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
    page.redact(code)
    return _render(display_path(shown_as + target.relative_to(root).as_posix()), page, end_line)


def _numbered(page: _Page) -> list[str]:
    return [f"{number:>6}\t{text}" for number, text in page.out]


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
        return "\n".join([header, *_numbered(page), hint])
    if page.skip and page.first <= total and page.skip >= page.line_chars.get(page.first, 0):
        raise ToolError(
            f"line {page.first} of {name} has {page.line_chars.get(page.first, 0)} "
            f"characters; start_char {page.skip} is past its end"
        )
    last = page.last if page.out else page.first - 1
    lines = _numbered(page)
    if last < total and (end_line is None or last < end_line):
        lines.append(f"[… {total - last} more lines; call read_file with start_line={last + 1}]")
    return f"{name} (lines {page.first}-{last} of {total})\n" + "\n".join(lines)
