"""Token estimation: a fast script-aware text counter and whole-request estimates.

Nothing here performs I/O or calls a model or a tokenizer. Estimates only need to be close:
``engram.graph._budget`` rescales them with the provider's reported usage (``reconcile``). Callers
inject the counter (``count``) so tests can pass a word counter and get exact budgets; the
default is ``count_text``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engram.graph._turn_context import attached_context

Counter = Callable[[str], int]
"""A token counter: text in, token count out."""

# --- estimator ------------------------------------------------------------------------------
ASCII_CHARS_PER_TOKEN = 4.0
"""English prose and code average about four characters per token."""
SPACE_PAIR_CHARS = 0.5
"""Each pair of consecutive spaces (indentation, alignment) weighs this many characters:
tokenizers merge runs of spaces, so indentation is cheap."""
DIGIT_RUN_TOKENS = 2.0
"""Extra tokens per run of digits: numbers split into short pieces (tables, hashes, ids)."""
CJK_TOKENS_PER_CHAR = 1.1
"""Chinese, Japanese and Korean characters cost about 1.1 tokens each."""
OTHER_BYTES_PER_TOKEN = 1.7
"""Other non-ASCII text (accents, Cyrillic, symbols, emoji) costs about one token per 1.7
UTF-8 bytes: a two-byte letter is about one token, a four-byte emoji two or three."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators the chat format adds around every message."""
TOOL_CALL_OVERHEAD_TOKENS = 8
"""Framing of one tool call (id, type, function wrapper)."""
REQUEST_OVERHEAD_TOKENS = 3
"""Tokens that prime the assistant reply once per request."""
IMAGE_BLOCK_TOKENS = 765
"""Flat cost charged for a non-text content block such as an image."""

_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f"
    "\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
    "\U00020000-\U0002fa1f]"
)
_CJK_UTF8_BYTES = 3
_DIGIT_RUN = re.compile(r"[0-9]+")


def count_text(text: str) -> int:
    """Estimate the tokens of ``text`` from its scripts.

    ASCII costs about four characters per token (runs of spaces are cheap, runs of digits
    dear), CJK characters about one token each, other non-ASCII text about one token per
    1.7 UTF-8 bytes. Linear in the text and fast enough for megabytes per call.

    Args:
        text: Any string.

    Returns:
        A non-negative token estimate (0 only for the empty string).
    """
    if not text:
        return 0
    space_discount = text.count("  ") * (2 - SPACE_PAIR_CHARS)
    digits = len(_DIGIT_RUN.findall(text)) * DIGIT_RUN_TOKENS
    if text.isascii():
        return max(1, math.ceil((len(text) - space_discount) / ASCII_CHARS_PER_TOKEN + digits))
    ascii_chars = len(text.encode("ascii", "ignore"))
    cjk = len(_CJK.findall(text))
    utf8 = len(text.encode("utf-8", "surrogatepass"))
    other_bytes = max(0, utf8 - ascii_chars - cjk * _CJK_UTF8_BYTES)
    estimate = (
        (ascii_chars - space_discount) / ASCII_CHARS_PER_TOKEN
        + digits
        + cjk * CJK_TOKENS_PER_CHAR
        + other_bytes / OTHER_BYTES_PER_TOKEN
    )
    return max(1, math.ceil(estimate))


def remembering(count: Counter) -> Counter:
    """Return ``count`` with each text's count kept, for one job that counts many repeats.

    Code lines repeat (blank lines, closing brackets, the same span seen twice), and a pack
    counts thousands of them; ``count`` must be pure. The memory lives as long as the
    returned counter.
    """
    known: dict[str, int] = {}

    def counted(text: str) -> int:
        tokens = known.get(text)
        if tokens is None:
            tokens = known[text] = count(text)
        return tokens

    return counted


def content_text(content: str | Sequence[Any]) -> str:
    """Return the text of a message content (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def _non_text_blocks(content: str | Sequence[Any]) -> int:
    if isinstance(content, str):
        return 0
    return sum(
        1
        for block in content
        if isinstance(block, Mapping) and not isinstance(block.get("text"), str)
    )


def estimate_message(message: BaseMessage, count: Counter = count_text) -> int:
    """Estimate one message as sent: content, attached turn context, tool calls, framing."""
    total = MESSAGE_OVERHEAD_TOKENS + count(content_text(message.content))
    appended = attached_context(message)
    if appended:
        total += count(appended)
    total += IMAGE_BLOCK_TOKENS * _non_text_blocks(message.content)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            args = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
            total += TOOL_CALL_OVERHEAD_TOKENS + count(call.get("name", "")) + count(args)
    return total


def estimate_messages(
    messages: Sequence[BaseMessage],
    *,
    system_prompt: str = "",
    tool_schemas: Sequence[Mapping[str, Any]] = (),
    count: Counter = count_text,
) -> int:
    """Estimate the input tokens of one model request.

    Args:
        messages: The conversation as sent (a system message in it is counted like any other).
        system_prompt: A system prompt sent ahead of ``messages``, if not already in them.
        tool_schemas: JSON schemas of the tools bound to the model.
        count: Token counter for plain text.

    Returns:
        Estimated prompt tokens, including per-message and per-request framing.
    """
    total = REQUEST_OVERHEAD_TOKENS
    if system_prompt:
        total += MESSAGE_OVERHEAD_TOKENS + count(system_prompt)
    for schema in tool_schemas:
        total += count(json.dumps(schema, ensure_ascii=False, sort_keys=True))
    for message in messages:
        total += estimate_message(message, count)
    return total
