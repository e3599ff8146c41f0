"""Parse the structure engram gives a prompt (pack sections, context line) to check no data forged it.

Independent of the product's escaping code on purpose: it looks for anything a model could
read as structure (any ``<section``/``</section``/``<tool_result`` tag, any ``[engram`` line)
and accepts only the exact forms engram writes, in the order it writes them.
"""

from __future__ import annotations

import re

__all__ = ["StructureError", "context_line_count", "forged_markers", "pack_sections"]

_ANY_SECTION_TAG = re.compile(r"<\s*/?\s*section\b[^>\n]*>?", re.IGNORECASE)
_OPEN = re.compile(r'<section name="([a-z_]+)">')
_CLOSE = "</section>"
_TOOL_TAG = re.compile(r"<\s*/?\s*tool_result\b", re.IGNORECASE)
_CONTEXT_LINE = re.compile(r"\[\s*engram\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\[\s*cleared tool result\b", re.IGNORECASE)


class StructureError(AssertionError):
    """The text's section tags are not the well-formed sequence engram writes."""


def pack_sections(text: str) -> list[str]:
    """Return the names of the sections in ``text``, in order.

    Raises:
        StructureError: A tag that is not an exact engram tag at the start of a line, or tags
            that do not alternate open, close.
    """
    names: list[str] = []
    is_open = False
    for match in _ANY_SECTION_TAG.finditer(text):
        tag = match.group(0)
        at_line_start = match.start() == 0 or text[match.start() - 1] == "\n"
        opened = _OPEN.fullmatch(tag)
        if not at_line_start or (opened is None and tag != _CLOSE):
            raise StructureError(f"stray section tag {tag!r} at {match.start()}")
        if (opened is not None) == is_open:
            raise StructureError(f"section tag {tag!r} out of order at {match.start()}")
        if opened is not None:
            names.append(opened.group(1))
        is_open = opened is not None
    if is_open:
        raise StructureError("the last section is never closed")
    return names


def forged_markers(text: str) -> list[str]:
    """Return tool-result tags, ``[engram`` lines and compaction placeholders in ``text``.

    Pack text has none of its own; a user turn has exactly one ``[engram context]`` line.
    """
    found = (*_TOOL_TAG.finditer(text), *_CONTEXT_LINE.finditer(text), *_PLACEHOLDER.finditer(text))
    return [m.group(0) for m in found]


def context_line_count(text: str) -> int:
    """Count what a model could take for the line opening engram's context (``[engram …``)."""
    return len(_CONTEXT_LINE.findall(text))
