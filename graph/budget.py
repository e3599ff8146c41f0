"""Pure token budget math: estimates, thresholds, reconciliation and compaction planning.

Nothing here performs I/O or calls a model. The token counter is injected (``count``) so tests
can pass a word counter and get exact budgets; the default is ``count_text``, a fast
script-aware estimator.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

__all__ = [
    "CLEAR_FRACTION",
    "CLEAR_MAX",
    "Counter",
    "MEMORY_CAP_DIVISOR",
    "MEMORY_CAP_MAX",
    "MEMORY_CAP_MIN",
    "Thresholds",
    "content_text",
    "count_text",
    "estimate_message",
    "estimate_messages",
    "reconcile",
    "thresholds",
]

Counter = Callable[[str], int]
"""A token counter: text in, token count out."""

# --- thresholds (DESIGN §5, seed defaults) -------------------------------------------------
SUMMARY_RESERVE_MAX = 20_000
"""Most tokens reserved for the summary output."""
SUMMARY_RESERVE_DIVISOR = 4
"""The summary reserve is window / this, before clamping."""
BUFFER_RESERVE_MAX = 13_000
"""Most tokens reserved as a safety buffer."""
BUFFER_RESERVE_DIVISOR = 8
"""The safety buffer is window / this, before clamping."""
RESERVE_MIN = 1_000
"""Least tokens reserved for each of summary output and buffer."""
TRIGGER_FLOOR_FRACTION = 0.5
"""A tiny window never triggers below this fraction of itself (reserves would eat it all)."""
CLEAR_MAX = 100_000
"""Clearing threshold ceiling in tokens."""
CLEAR_FRACTION = 0.6
"""Clearing threshold as a fraction of the compaction trigger."""
MEMORY_CAP_MIN = 500
"""Least tokens for the memory block."""
MEMORY_CAP_MAX = 5_000
"""Most tokens for the memory block."""
MEMORY_CAP_DIVISOR = 200
"""The memory cap is window // this, before clamping."""

# --- estimator ------------------------------------------------------------------------------
ASCII_CHARS_PER_TOKEN = 4.0
"""English prose and code average about four characters per token."""
CJK_TOKENS_PER_CHAR = 1.1
"""Chinese, Japanese and Korean characters cost about 1.1 tokens each."""
SPACE_PAIR_CHARS = 0.5
"""Each pair of consecutive spaces (indentation, alignment) weighs this many characters:
tokenizers merge runs of spaces, so indentation is cheap."""
OTHER_CHARS_PER_TOKEN = 1.5
"""Other non-ASCII scripts (Cyrillic, Greek, Arabic, accents) pack about 1.5 chars a token."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators the chat format adds around every message."""
TOOL_CALL_OVERHEAD_TOKENS = 8
"""Framing of one tool call (id, type, function wrapper)."""
REQUEST_OVERHEAD_TOKENS = 3
"""Tokens that prime the assistant reply once per request."""
IMAGE_BLOCK_TOKENS = 765
"""Flat cost charged for a non-text content block such as an image."""

# --- reconciliation -------------------------------------------------------------------------
RECONCILE_MIN_RATIO = 0.25
"""Provider/estimate ratios below this are treated as noise and clamped."""
RECONCILE_MAX_RATIO = 4.0
"""Provider/estimate ratios above this are treated as noise and clamped."""

_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f"
    "\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
    "\U00020000-\U0002fa1f]"
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def count_text(text: str) -> int:
    """Estimate the tokens of ``text`` from its scripts.

    CJK characters count one token each, ASCII about four characters per token, other
    non-ASCII characters about two per token. Fast enough for megabytes per call.

    Args:
        text: Any string.

    Returns:
        A non-negative token estimate (0 only for the empty string).
    """
    if not text:
        return 0
    space_discount = text.count("  ") * (2 - SPACE_PAIR_CHARS)
    if text.isascii():
        return max(1, math.ceil((len(text) - space_discount) / ASCII_CHARS_PER_TOKEN))
    non_ascii = len(_NON_ASCII.findall(text))
    cjk = len(_CJK.findall(text))
    other = non_ascii - cjk
    ascii_chars = len(text) - non_ascii - space_discount
    estimate = (
        ascii_chars / ASCII_CHARS_PER_TOKEN
        + cjk * CJK_TOKENS_PER_CHAR
        + other / OTHER_CHARS_PER_TOKEN
    )
    return max(1, math.ceil(estimate))


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
    """Estimate one message: content, tool calls (names and arguments) and framing."""
    total = MESSAGE_OVERHEAD_TOKENS + count(content_text(message.content))
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


@dataclass(frozen=True)
class Thresholds:
    """Token thresholds derived from a context window."""

    window: int
    """The model's context window in tokens."""
    trigger: int
    """Summarize (tier 3) when the estimate reaches this."""
    clear: int
    """Clear old tool results (tier 2) when the estimate reaches this."""
    memory_cap: int
    """Most tokens the injected memory block may use."""


def thresholds(window: int) -> Thresholds:
    """Derive the compaction trigger, clearing threshold and memory cap from a window.

    trigger = window − min(20000, max(1000, window/4)) − min(13000, max(1000, window/8)),
    clamped into the window; clear = min(100000, 0.6 × trigger); memory cap =
    max(500, min(5000, window // 200)).

    Args:
        window: Context window in tokens (positive).

    Raises:
        ValueError: ``window`` is not positive.
    """
    if window <= 0:
        raise ValueError(f"context window must be positive, got {window}")
    summary_reserve = min(SUMMARY_RESERVE_MAX, max(RESERVE_MIN, window // SUMMARY_RESERVE_DIVISOR))
    buffer_reserve = min(BUFFER_RESERVE_MAX, max(RESERVE_MIN, window // BUFFER_RESERVE_DIVISOR))
    floor = max(1, int(window * TRIGGER_FLOOR_FRACTION))
    trigger = min(window, max(floor, window - summary_reserve - buffer_reserve))
    clear = min(CLEAR_MAX, math.floor(round(trigger * CLEAR_FRACTION, 6)))
    memory_cap = max(MEMORY_CAP_MIN, min(MEMORY_CAP_MAX, window // MEMORY_CAP_DIVISOR))
    return Thresholds(window=window, trigger=trigger, clear=clear, memory_cap=memory_cap)


def reconcile(
    estimate: int, last_reported_input: int | None, estimate_at_last_report: int | None
) -> int:
    """Correct an estimate with the provider's last reported input tokens.

    The provider counted ``last_reported_input`` for a request we had estimated at
    ``estimate_at_last_report``; their ratio rescales the current estimate. Implausible ratios
    are clamped, and missing or zero figures leave the estimate unchanged.

    Args:
        estimate: Current estimate of the next request.
        last_reported_input: Input tokens the provider reported for the previous call.
        estimate_at_last_report: Our estimate of that previous request.

    Returns:
        The corrected estimate.
    """
    if not last_reported_input or not estimate_at_last_report:
        return estimate
    ratio = last_reported_input / estimate_at_last_report
    ratio = min(RECONCILE_MAX_RATIO, max(RECONCILE_MIN_RATIO, ratio))
    return math.ceil(estimate * ratio)
