"""Size limits of chunking: files too big or too dense to chunk, and the one chunk they get.

Chunk texts are slices of the file, each at most ``MAX_CHUNK_CHARS``, so indexing memory grows
with the file, never with the file times its definitions. A file over ``MAX_CHUNKED_FILE_CHARS``,
or one that is mostly very long lines (minified bundles, generated data), is not parsed into
chunks at all: it becomes one small ``file`` chunk that names it and keeps its first
characters, which is all a search needs to find it.
"""

from __future__ import annotations

MAX_CHUNK_CHARS = 24_000
"""Largest chunk text (about 6K tokens); a longer definition keeps its head."""
MAX_CHUNKED_FILE_CHARS = 600_000
"""Files longer than this are summarised as one chunk instead of chunked."""
MINIFIED_LINE_CHARS = 1_000
"""A line at least this long is not hand-written code."""
MINIFIED_SHARE = 0.5
"""A file whose text is mostly in such lines is minified or generated."""
SUMMARY_CHARS = 1_000
"""Characters of an unchunked file kept in its one chunk."""
TRUNCATION_MARK = "\n…"


def unchunkable_reason(text: str) -> str:
    """Return why ``text`` should not be chunked ("" when it should be)."""
    if len(text) > MAX_CHUNKED_FILE_CHARS:
        return f"large file: {len(text):,} characters"
    long_chars = 0
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start >= MINIFIED_LINE_CHARS:
            long_chars += end - start
        start = end + 1
    if long_chars > MINIFIED_SHARE * len(text):
        return f"minified or generated: {long_chars:,} of {len(text):,} characters in long lines"
    return ""


def cap_chunk_text(text: str) -> str:
    """Return ``text`` cut to ``MAX_CHUNK_CHARS`` (with a mark when cut)."""
    if len(text) <= MAX_CHUNK_CHARS:
        return text
    return text[: MAX_CHUNK_CHARS - len(TRUNCATION_MARK)] + TRUNCATION_MARK
