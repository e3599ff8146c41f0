"""Redact the credentials in ``grep_code``'s matching lines, with the lines around them.

A matching line alone can hold a piece of a credential that only its neighbours make one: the
token under an ``Authorization: Bearer`` line, a line of a private key's body. So each file's
matches are redacted inside windows of the file's own lines around them, and a line anywhere
inside a private-key block (from its BEGIN line to its END line) is hidden whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from engram.graph.tools._file_reading import confined_path
from engram.stores import redact_lines
from engram.stores.codeindex import GrepMatch, clip_line, is_code_file
from engram.stores.files import open_regular

CONTEXT_LINES = 3
"""Lines of the file read on each side of a match for its redaction."""
MAX_READ_BYTES = 4 << 20
"""A file is read again up to its last match's neighbours, and at most this many bytes; a
file whose matches lie further in is redacted without their neighbours."""
MAX_TOTAL_READ_BYTES = 16 << 20
"""All files of one search together are read again up to this many bytes; the files after
that are redacted without their neighbours."""
READ_CHUNK_BYTES = 64 << 10
MAX_CONTEXT_LINE_CHARS = 4_000
"""A neighbouring line longer than this is cut before redaction (a value that long is data)."""

_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_HIDDEN_KEY_LINE = "[REDACTED private key]"


def redacted_matches(root: Path, matches: Sequence[GrepMatch]) -> list[str]:
    """Return each match's text with its credentials redacted.

    A source file's lines are redacted as code (``redact_secrets``). When a file cannot be read
    again, or a line no longer reads as ripgrep saw it, that file's matching lines are
    redacted together without their neighbours.
    """
    out = [m.text for m in matches]
    budget = [MAX_TOTAL_READ_BYTES]
    by_path: dict[str, list[int]] = {}
    for number, match in enumerate(matches):
        by_path.setdefault(match.path, []).append(number)
    for path, numbers in by_path.items():
        code = is_code_file(path)
        shown = {matches[n].line: matches[n].text for n in numbers}
        redacted = _redacted_in_file(root, path, shown, code, budget)
        if redacted is None:
            texts = redact_lines([matches[n].text for n in numbers], code=code)
            redacted = {matches[n].line: t for n, t in zip(numbers, texts, strict=True)}
        for n in numbers:
            out[n] = redacted[matches[n].line]
    return out


def _redacted_in_file(
    root: Path, path: str, shown: dict[int, str], code: bool, budget: list[int]
) -> dict[int, str] | None:
    """Return the matching lines redacted among their neighbours, or None to fall back.

    ``budget`` holds the bytes all files may still read together; this file's are taken off.
    """
    cap = min(MAX_READ_BYTES, budget[0])
    if cap <= 0:
        return None
    try:
        with open_regular(confined_path(root, path)) as handle:
            data = _read_lines(handle, max(shown) + CONTEXT_LINES, cap)
    except Exception:  # noqa: BLE001 - gone, swapped or refused: redact without neighbours
        return None
    budget[0] -= cap if data is None else len(data)
    if data is None:
        return None
    lines = data.decode("utf-8", errors="replace").split("\n")
    if any(n > len(lines) or clip_line(lines[n - 1]) != text for n, text in shown.items()):
        return None  # changed since ripgrep read it
    in_key = _private_key_lines(lines, max(shown))
    wanted = sorted(
        {
            n
            for line in shown
            for n in range(max(1, line - CONTEXT_LINES), line + CONTEXT_LINES + 1)
            if n <= len(lines)
        }
    )
    redacted: dict[int, str] = {}
    for window in _runs(wanted):
        texts = redact_lines(
            [lines[n - 1].rstrip("\r")[:MAX_CONTEXT_LINE_CHARS] for n in window], code=code
        )
        redacted.update(zip(window, texts, strict=True))
    return {
        n: _HIDDEN_KEY_LINE
        if n in in_key and not _KEY_BEGIN.search(lines[n - 1])
        else clip_line(redacted[n])
        for n in shown
    }


def _read_lines(handle: BinaryIO, last: int, max_bytes: int) -> bytes | None:
    """Return the file's bytes through line ``last`` (or its end), None past ``max_bytes``."""
    data = bytearray()
    breaks = 0
    while breaks < last:
        chunk = handle.read(READ_CHUNK_BYTES)
        if not chunk:
            return bytes(data)
        data += chunk
        breaks += chunk.count(b"\n")
        if len(data) > max_bytes:
            return None
    return bytes(data)


def _private_key_lines(lines: list[str], last: int) -> set[int]:
    """Return the numbers of the lines up to ``last`` inside a private-key block."""
    inside: set[int] = set()
    open_block = False
    for number, line in enumerate(lines[:last], start=1):
        if _KEY_BEGIN.search(line):
            open_block = True
        if open_block:
            inside.add(number)
        if _KEY_END.search(line):
            open_block = False
    return inside


def _runs(numbers: list[int]) -> list[list[int]]:
    """Split sorted line numbers into runs of consecutive ones."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs
