"""Mask the passwords of server URLs in every message and log line that may name one.

A database or Chroma URL can carry a password (``postgresql://user:secret@host/db``, or the
keyword form ``host=h password=secret``), and drivers quote the URL they were given in their
own errors. Everything engram says about a server goes through ``mask_url_passwords``; the
configured URLs' passwords are also masked where a driver split the URL wrongly and quotes a
piece of one (an unescaped ``@`` in a password makes the rest of it look like the host).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable

MASK = "***"
PLACEHOLDERS = frozenset({"PASSWORD", "password", "PASS", "<password>", MASK})
"""What a documented example puts where the password goes: shown as it is."""
SERVER_URL_VARIABLES = (
    "ENGRAM_DATABASE_URL",
    "ENGRAM_CHROMA_URL",
    "ENGRAM_BASE_URL",
    "OPENAI_BASE_URL",
    "ENGRAM_EMBEDDING_URL",
)
"""The environment variables that name a server, whose passwords are never shown."""
MIN_PIECE_CHARS = 4
"""A piece of a password shorter than this is not looked for on its own (too many false hits)."""

_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<rest>[^\s\"'<>]+)")
_KEYWORD_PASSWORD = re.compile(
    r"(?P<key>\bpass(?:word|wd)?\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'?|[^\s&'\"]+)", re.IGNORECASE
)


def _mask_userinfo(match: re.Match[str]) -> str:
    rest = match.group("rest")
    userinfo, at, host = rest.rpartition("@")
    if not at or ":" not in userinfo:
        return match.group(0)
    user, password = userinfo.split(":", 1)
    if password in PLACEHOLDERS:
        return match.group(0)
    return f"{match.group('scheme')}{user}:{MASK}@{host}"


def url_password(url: str) -> str:
    """Return the password a server URL (or keyword connection string) carries, or ""."""
    keyword = _KEYWORD_PASSWORD.search(url)
    if keyword and "://" not in url:
        return keyword.group("value").strip("'")
    found = _URL.search(url)
    if found is None and keyword:
        return keyword.group("value")
    # ``user:password@host`` without a scheme is a mistake, but its password is still one
    userinfo, at, _ = (found.group("rest") if found else url.strip()).rpartition("@")
    if not at or ":" not in userinfo:
        return keyword.group("value") if keyword else ""
    return userinfo.split(":", 1)[1]


def _known_passwords(urls: Iterable[str]) -> list[str]:
    pieces: set[str] = set()
    for url in urls:
        password = url_password(url)
        if not password or password in PLACEHOLDERS:
            continue
        pieces.add(password)
        pieces.update(p for p in password.split("@") if len(p) >= MIN_PIECE_CHARS)
    return sorted(pieces, key=len, reverse=True)  # the whole before its pieces


def configured_urls() -> tuple[str, ...]:
    """Return the server URLs the environment configures (``SERVER_URL_VARIABLES``)."""
    return tuple(url for name in SERVER_URL_VARIABLES if (url := os.environ.get(name, "")))


def mask_url_passwords(text: str, urls: Iterable[str] | None = None) -> str:
    """Return ``text`` with the password of every URL and connection string in it masked.

    Args:
        text: A message, an exception's text, a log line.
        urls: Server URLs whose passwords are also masked wherever they appear; by default
            the ones the environment configures.
    """
    masked = _URL.sub(_mask_userinfo, text)
    masked = _KEYWORD_PASSWORD.sub(
        lambda m: m.group(0) if m.group("value") in PLACEHOLDERS else f"{m.group('key')}{MASK}",
        masked,
    )
    for password in _known_passwords(configured_urls() if urls is None else urls):
        masked = masked.replace(password, MASK)
    return masked


def server_address(url: str) -> str:
    """Return a server URL as it may be shown: its password masked, its scheme kept."""
    return mask_url_passwords(url, [url])


class MaskingFilter(logging.Filter):
    """A logging filter that masks URL passwords in each record it lets through."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message with its passwords masked; keep every record."""
        message = record.getMessage()
        masked = mask_url_passwords(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
