"""Neutralise engram's structural markers inside untrusted text (pure).

The model tells engram's own structure from data by a few markers: the pack's
``<section name="…">`` tags, the ``<tool_result …>`` wrapper, the ``[engram context]`` line that
opens the context appended to a user turn, and the placeholders compaction leaves. Text from a
repository, a tool, a memory or a rules file must never be able to open or close one of them,
so each marker's first character is replaced by its HTML entity: the model still reads the
text, but no longer as structure. Escaping is idempotent.
"""

from __future__ import annotations

import re

MARKER_TAGS = ("section", "tool_result")
"""Tag names engram's prompt structure uses."""
_TAG = re.compile(rf"<(?=\s*(?:/\s*)?(?:{'|'.join(MARKER_TAGS)})\b)", re.IGNORECASE)
_LINE = re.compile(r"\[(?=\s*(?:engram\b|cleared tool result\b))", re.IGNORECASE)


def escape_markers(text: str) -> str:
    """Return ``text`` with every structural marker neutralised (``<section`` → ``&lt;section``)."""
    return _LINE.sub("&#91;", _TAG.sub("&lt;", text))
