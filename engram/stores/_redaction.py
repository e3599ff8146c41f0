"""Redact credentials from text engram stores or shows: tool results, spilled outputs, checks.

Two detectors find the spans: detect-secrets' per-service plugins (its well-kept provider
formats: AWS, Azure, Artifactory, IBM, Square, Twilio, …; its entropy, keyword, IP and basic-auth
plugins are left out, as they fire on ordinary prose and code), and the rules that keep secrets
out of memory (``engram.stores._secrets``) for what it lacks: more provider formats, private-key
blocks, credential URLs with placeholders told apart, values next to a credential keyword,
passwords in sentences, and ``NAME=value`` lines whose name is a secret's (what ``env`` prints).
Each span is replaced by ``[REDACTED <kind>]``, so the model, the checkpoints, the ledger and
``engram sessions show`` never hold the value. ``bench/RELIABILITY.md`` measures both.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Any

from engram.stores._regex_literals import TextCheck
from engram.stores._scan_text import Squeezed, scan_pieces
from engram.stores._secrets import (
    _ENCODED_KEY,
    _KEYED_VALUE,
    _PASSWORD,
    _PASSWORD_SHAPES,
    _XML_ELEMENT,
    _XML_KEYED,
    PLACEHOLDER,
    SECRET_ENV_NAME,
    SECRET_PATTERNS,
    _is_password,
    _keyed_secret,
    element_secret,
    encoded_key,
    joined_matches,
    joined_secret,
    looks_random,
    shaped_password,
    value_end,
)

_BEGIN = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d{1,2}:"
_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|Private-MAC:[ \t]*[0-9a-fA-F]*"
"""A PEM, OpenSSH or PGP private key's first and last lines, or a PuTTY key file's."""
_KEY_MARKS = ("PRIVATE KEY", "PuTTY-User-Key-File-", "Private-MAC:")
"""Text a line holds when it may begin or end a private key (``key_open_after``'s shortcut)."""
_KEY_BLOCK = re.compile(rf"(?:{_BEGIN})[\s\S]*?(?:{_END}|\Z)")
_KEY_BEGIN = re.compile(_BEGIN)
_KEY_END = re.compile(_END)
HIDDEN_KEY_LINE = "[REDACTED private key]"
"""What a line inside a private-key block shows."""
CONTEXT_LINES = 3
"""Lines of a file on each side of the lines shown that their redaction reads
(``LineRedactor``): a value under its name (``token:``), a header continued after ``\\``."""
MAX_LINE_CHARS = 16_000
"""A neighbouring line is cut to this many characters before ``LineRedactor`` redacts the
lines around it (a value that long is data)."""
_ENV_LINE = re.compile(r"^(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^\n]+)$", re.M)
MIN_ENV_VALUE_CHARS = 6
"""A secret-named variable's value shorter than this (``0``, ``true``) is left alone."""

Span = tuple[int, int, str]
LEFT_OUT_PLUGINS = frozenset(
    {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
        "IPPublicDetector",
        "BasicAuthDetector",
    }
)
"""detect-secrets plugins not used: they fire on prose, code and example URLs."""


@functools.cache
def service_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Return detect-secrets' per-service patterns as (kind, regex) (loaded once, on first use)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(
        (str(plugin.secret_type), pattern)
        for plugin in plugins
        if plugin.__name__ not in LEFT_OUT_PLUGINS
        for pattern in getattr(plugin, "denylist", ())
    )


QUOTES = "\"'`"


def _quoted(text: str, start: int) -> bool:
    """Return True when the value starting at ``start`` is a quoted literal."""
    return start > 0 and text[start - 1] in QUOTES


def _literal(value: str) -> bool:
    """Return True for a whole quoted literal that is no template (``'{}:{}'.format``)."""
    whole = len(value) >= 2 and value[0] in QUOTES and value[-1] == value[0]
    return whole and "{" not in value and "%" not in value


def _spans(original: str, services: bool, code: bool) -> list[Span]:
    squeezed = Squeezed.of(original)
    return [
        (squeezed.start(offset + a), squeezed.end(offset + b), kind)
        for offset, piece in scan_pieces(squeezed.text)
        for a, b, kind in _found(piece, services, code)
    ]


def _found(text: str, services: bool, code: bool) -> list[Span]:
    check = TextCheck(text)

    def matches(pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        # no search where the pattern cannot match (no literal it needs is in the text)
        return pattern.finditer(text) if check.may_match(pattern) else iter(())

    found: list[Span] = [(m.start(), m.end(), "private key") for m in matches(_KEY_BLOCK)]
    found += [(m.start(), m.end(), "private key") for m in matches(_ENCODED_KEY) if encoded_key(m)]
    for kind, pattern in (*(service_patterns() if services else ()), *SECRET_PATTERNS):
        found += [(m.start(), m.end(), kind) for m in matches(pattern) if m.end() > m.start()]
    for m in matches(_KEYED_VALUE):
        value = m.group("value")
        if code and not (_quoted(text, m.start("value")) or looks_random(value)):
            continue  # source code: ``token = make_token()`` names a value, it holds none
        if _keyed_secret(value, m.group("sep"), m.group("after")):
            found.append((m.start("value"), value_end(text, m.end("value")), "credential"))
    for m in matches(_XML_KEYED):
        if _keyed_secret(m.group("value"), "=", ""):
            found.append((m.start("value"), m.end("value"), "credential"))
    for m in matches(_PASSWORD):
        if code and not _literal(m.group("value")):
            continue  # source code: ``password=password``, ``password: Password to log in``
        if _is_password(m):
            found.append((m.start("value"), value_end(text, m.end("value")), "password"))
    for m in matches(_XML_ELEMENT):
        if element := element_secret(m):
            found.append((m.start("value"), m.end("value"), element))
    for pattern in _PASSWORD_SHAPES:
        for m in matches(pattern):
            if shaped_password(m):
                found.append((m.start("value"), m.end("value"), "password"))
    for m in joined_matches(text):
        if joined := joined_secret(m):
            found.append((m.start("value"), m.end("value"), joined))
    for m in _ENV_LINE.finditer(text):
        value = m.group("value").strip().strip("\"'")
        if (
            SECRET_ENV_NAME.search(m.group("name"))
            and len(value) >= MIN_ENV_VALUE_CHARS
            and not PLACEHOLDER.search(value)
            and not value.startswith("$")  # a reference to another variable
            and "..." not in value  # an elided example
        ):
            found.append((m.start("value"), m.end("value"), "credential"))
    return found


def redact_secrets(text: str, *, services: bool = True, code: bool = False) -> tuple[str, int]:
    """Return ``text`` with every credential replaced, and how many spans were replaced.

    ``services=False`` leaves detect-secrets' patterns out (to measure engram's rules alone).
    ``code=True`` reads ``text`` as source code, where a password or key is a quoted literal:
    a value next to a credential word counts only when quoted (or random-looking), so
    ``login(password=password)`` and a docstring's ``password: Password to log in`` stay
    as they are. Provider formats, private keys, credential URLs and ``NAME=value`` lines are
    found the same in either.
    """
    merged = _merged_spans(text, services, code)
    if not merged:
        return text, 0
    out: list[str] = []
    at = 0
    for start, end, kind in merged:
        out.append(text[at:start])
        out.append(f"[REDACTED {kind}]")
        at = end
    out.append(text[at:])
    return "".join(out), len(merged)


def redact_lines(lines: Sequence[str], *, code: bool = False) -> list[str]:
    """Return ``lines`` redacted as one text, still one line for each line given.

    A credential that runs over several lines (``Authorization: Bearer`` with the token on the
    next line, a private key) is found in the joined text; each line it touches shows
    ``[REDACTED <kind>]`` in place of its part of it, so no line keeps a piece of the value.
    """
    text = "\n".join(lines)
    merged = _merged_spans(text, True, code)
    if not merged:
        return list(lines)
    out: list[str] = []
    first = 0  # the first span that can still touch this line or a later one
    line_start = 0
    for line in lines:
        line_end = line_start + len(line)
        while first < len(merged) and merged[first][1] <= line_start:
            first += 1
        pieces: list[str] = []
        at = line_start
        for start, end, kind in itertools.islice(merged, first, None):
            if start >= line_end:
                break
            pieces += [text[at : max(start, line_start)], f"[REDACTED {kind}]"]
            at = min(end, line_end)
        pieces.append(text[at:line_end])
        out.append("".join(pieces))
        line_start = line_end + 1
    return out


def redact_window(lines: Sequence[str], *, code: bool, in_key: bool = False) -> list[str]:
    """Return consecutive lines of a file redacted as one text, one line out for each in.

    ``in_key``: the window starts inside a private-key block whose BEGIN line is above it;
    its lines through the block's END line are hidden whole.
    """
    out = redact_lines(lines, code=code)
    for number, line in enumerate(lines if in_key else ()):
        out[number] = HIDDEN_KEY_LINE
        if not key_open_after(True, line):
            break
    return out


def key_open_after(open_before: bool, line: str) -> bool:
    """Return whether a private-key block is open after ``line`` (``open_before``: before it)."""
    if not any(mark in line for mark in _KEY_MARKS):
        return open_before
    begin = max((m.start() for m in _KEY_BEGIN.finditer(line)), default=-1)
    end = max((m.start() for m in _KEY_END.finditer(line)), default=-1)
    return open_before if begin == end == -1 else begin > end


class LineRedactor:
    """Redacts runs of a file's lines among their neighbours, as the model is shown them.

    A line alone can hold a piece of a credential that only its neighbours make one: the token
    under a ``token:`` line, a line of a private key's body. ``run`` redacts the lines asked
    for inside a window of CONTEXT_LINES more on each side, and hides a line anywhere inside a
    private-key block (from its BEGIN line to its END line) whole, however far above its
    BEGIN line is.
    """

    def __init__(self, lines: Sequence[str], *, code: bool) -> None:
        self.lines = lines
        self.code = code
        self._key_open: list[bool] | None = None

    def run(self, first: int, last: int) -> list[str]:
        """Return lines ``first`` to ``last`` (1-based, inclusive) redacted."""
        low = max(1, first - CONTEXT_LINES)
        high = min(len(self.lines), last + CONTEXT_LINES)
        window = [  # the neighbours only are cut: the lines asked for come back whole
            line if first <= number <= last else line[:MAX_LINE_CHARS]
            for number, line in enumerate(self.lines[low - 1 : high], start=low)
        ]
        out = redact_window(window, code=self.code, in_key=self._open_before(low))
        return out[first - low : last - low + 1]

    def _open_before(self, number: int) -> bool:
        if self._key_open is None:  # once per file: whether a key block is open above each line
            states, open_ = [], False
            for line in self.lines:
                states.append(open_)
                open_ = key_open_after(open_, line)
            self._key_open = states
        return self._key_open[number - 1] if number <= len(self._key_open) else False


def _merged_spans(text: str, services: bool, code: bool) -> list[Span]:
    """Return the credential spans of ``text`` in order, overlapping ones merged."""
    merged: list[Span] = []
    for start, end, kind in sorted(_spans(text, services, code)):
        if merged and start <= merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
            continue
        merged.append((start, end, kind))
    return merged
