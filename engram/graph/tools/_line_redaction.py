"""Redact ``grep_code``'s matching lines among the lines around them in their files.

A matching line alone can hold a piece of a credential that only its neighbours make one (the
token under a ``token:`` line, a line of a private key's body), so each file is read again up
to its last match and the matches are redacted by ``LineRedactor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from engram.stores import CONTEXT_LINES, MAX_LINE_CHARS, LineRedactor, redact_lines
from engram.stores.codeindex import GrepMatch, clip_line, is_code_file
from engram.stores.files import confine, open_regular

MAX_READ_BYTES = 4 << 20
"""A file is read again up to its last match's neighbours, and at most this many bytes; a
file whose matches lie further in is redacted without their neighbours."""
MAX_TOTAL_READ_BYTES = 16 << 20
"""All files of one search together are read again up to this many bytes; the files after
that are redacted without their neighbours."""
READ_CHUNK_BYTES = 64 << 10


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
        with open_regular(confine(root, path)) as handle:
            data = _read_lines(handle, max(shown) + CONTEXT_LINES, cap)
    except Exception:  # noqa: BLE001 - gone, swapped or refused: redact without neighbours
        return None
    budget[0] -= cap if data is None else len(data)
    if data is None:
        return None
    text_lines = data.decode("utf-8", errors="replace").split("\n")
    lines = [line.rstrip("\r")[:MAX_LINE_CHARS] for line in text_lines]  # a match shows 400
    if any(n > len(lines) or clip_line(lines[n - 1]) != text for n, text in shown.items()):
        return None  # changed since ripgrep read it
    redactor = LineRedactor(lines, code=code)
    redacted: dict[int, str] = {}
    for run in _runs(sorted(shown)):
        redacted.update(zip(run, redactor.run(run[0], run[-1]), strict=True))
    return {n: clip_line(text) for n, text in redacted.items()}


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


def _runs(numbers: list[int]) -> list[list[int]]:
    """Split sorted line numbers into runs of consecutive ones."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs
