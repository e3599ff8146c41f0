"""Text shaped for the credential patterns to search in linear time.

Some patterns backtrack: over a long run of one character or of whitespace (detect-secrets'
IBM key pattern is cubic in a run of spaces), or over a long line of a repeated prefix
(``eyJ``, ``password=``). A hostile file can hold either, and every slice, read and tool result
is searched. ``Squeezed`` shortens the runs and ``scan_pieces`` cuts long lines into
overlapping windows; positions found map back to the original text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

RUN_KEEP_CHARS = 16
"""A run of one character, or of whitespace, longer than this is shortened before the
patterns run (``Squeezed``)."""
_LONG_RUN = re.compile(rf"(.)\1{{{RUN_KEEP_CHARS},}}|\s{{{RUN_KEEP_CHARS + 1},}}", re.S)
SCAN_LINE_CHARS = 2_000
"""A line longer than this is searched in overlapping windows (``scan_pieces``)."""
SCAN_OVERLAP_CHARS = 400
_LONG_LINE = re.compile(rf"[^\n]{{{SCAN_LINE_CHARS + 1},}}")


def scan_pieces(text: str) -> Iterator[tuple[int, str]]:
    """Yield (offset, piece) of ``text`` to search, each no wider than a long line's window.

    A pattern can take time quadratic in a line's length (``eyJ`` repeated for a web token
    pattern, ``password=`` repeated for a connection string), so a line longer than
    SCAN_LINE_CHARS is searched in windows of that size overlapping by SCAN_OVERLAP_CHARS
    (more than any credential is long); the runs of shorter lines between are searched whole,
    so a key block or a value under its name is found across their lines, and each long
    line's first and last SCAN_OVERLAP_CHARS are searched with as much of the text on either
    side (a name ending one line, its value on the next).
    """
    if len(text) <= SCAN_LINE_CHARS:
        yield 0, text
        return
    start = 0  # of the run of short lines not yet searched
    for line in _LONG_LINE.finditer(text):
        begin, end = line.span()
        if begin > start:
            yield start, text[start:begin]
        # the long line's edges with the lines around them: a name ending the line above
        # and its value starting this one, or a name ending this one and its value below
        yield (
            max(begin - SCAN_OVERLAP_CHARS, 0),
            text[max(begin - SCAN_OVERLAP_CHARS, 0) : begin + SCAN_OVERLAP_CHARS],
        )
        step = SCAN_LINE_CHARS - SCAN_OVERLAP_CHARS
        for at in range(begin, max(begin + 1, end - SCAN_OVERLAP_CHARS), step):
            yield at, text[at : min(at + SCAN_LINE_CHARS, end)]
        yield end - SCAN_OVERLAP_CHARS, text[end - SCAN_OVERLAP_CHARS : end + SCAN_OVERLAP_CHARS]
        start = end
    if start < len(text):
        yield start, text[start:]


class Squeezed:
    """A text with its long runs shortened, and the way back to the original's positions.

    Some patterns backtrack over a long run of one character or of whitespace (detect-secrets'
    IBM key pattern, optional spaces, then one or more, then optional ones again, takes cubic
    time; a credential word's optional whitespace around a whitespace separator quadratic), so
    a file holding ``token`` and 100,000 spaces would stop every redaction for minutes. A run
    longer than RUN_KEEP_CHARS keeps its first and last halves: no credential needs such a
    run, and a pattern that spans one matches the shortened run the same.
    """

    def __init__(self, text: str, cuts: list[tuple[int, int]]) -> None:
        self.text = text
        self._cuts = cuts
        """(position in ``text``, characters left out before it), one per shortened run."""
        self._at = [position for position, _ in cuts]

    @classmethod
    def of(cls, original: str) -> Squeezed:
        pieces: list[str] = []
        cuts: list[tuple[int, int]] = []
        at = kept = removed = 0
        for run in _LONG_RUN.finditer(original):
            start, end = run.span()
            half = RUN_KEEP_CHARS // 2
            pieces.append(original[at : start + half])
            kept += start + half - at
            removed += end - start - 2 * half
            cuts.append((kept, removed))
            at = end - half
        if not cuts:
            return cls(original, [])
        pieces.append(original[at:])
        return cls("".join(pieces), cuts)

    def start(self, position: int) -> int:
        """Return where the character at ``position`` of ``text`` is in the original."""
        i = bisect.bisect_right(self._at, position)
        return position + (self._cuts[i - 1][1] if i else 0)

    def end(self, position: int) -> int:
        """Return the original position of an end (exclusive) at ``position`` of ``text``."""
        return self.start(position - 1) + 1 if position > 0 else 0
