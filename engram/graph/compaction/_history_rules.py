"""Pure message-history rules and rewrites: validation, tool-result clearing, rebuilt history.

Everything here takes and returns LangChain messages without I/O. The rules are the ones
OpenAI-compatible chat APIs enforce (a broken history is answered with HTTP 400).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engram.graph._prompts import render_turn_context
from engram.graph._tokens import content_text
from engram.graph._turn_context import attach_context, attached_context
from engram.stores.files import find_spill_path

Role = Literal["system", "user", "summary", "assistant", "tool", "other"]

SUMMARY_HEADER = "[Compacted conversation summary]"
"""First line of the user message that carries a compaction summary."""
ACKNOWLEDGEMENT = "Understood. I have the context of the earlier conversation; let's continue."
"""Assistant reply placed after the summary so roles keep alternating."""
SUMMARY_SECTIONS = (
    "User goals and constraints",
    "Progress and decisions",
    "Files and code locations",
    "Open items and next steps",
)
"""The four sections every summary must contain, in this order."""
CLEARED_PREFIX = "[cleared tool result:"
"""Start of the placeholder that replaces a cleared tool result body."""
PLACEHOLDER_ARGS_CHARS = 120
"""Characters of a tool call's arguments kept in its cleared-result placeholder."""
PLACEHOLDER_ERROR_CHARS = 200
"""Characters of an error line kept in a cleared-result placeholder."""
ERROR_SCAN_CHARS = 4_000
"""Characters scanned at each end of a long result for an error line."""
ERROR_LINE = re.compile(r"error|exception|traceback|failed|fatal|denied|not found", re.I)
"""A line matching this reports a failure worth keeping when a result is condensed."""
_WRAPPER = re.compile(r"</?tool_result\b[^>]*>")
TURN_CONTEXT_MARK = "\n\n" + render_turn_context("-").splitlines()[0]
"""Where the context engram appends to a user turn (memory, code map) starts."""
CONTEXT_CLEARED = "\n\n[engram context of this turn cleared]"
"""What replaces the context block of an earlier user turn after clearing."""


def roles_of(messages: Sequence[BaseMessage]) -> list[Role]:
    """Return the role of each message; compaction summaries get their own role."""
    roles: list[Role] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            roles.append("system")
        elif isinstance(message, HumanMessage):
            roles.append("summary" if is_summary(message) else "user")
        elif isinstance(message, AIMessage):
            roles.append("assistant")
        elif isinstance(message, ToolMessage):
            roles.append("tool")
        else:
            roles.append("other")
    return roles


def is_summary(message: BaseMessage) -> bool:
    """Return True for the user message that carries a compaction summary."""
    return isinstance(message, HumanMessage) and content_text(message.content).startswith(
        SUMMARY_HEADER
    )


def is_cleared(message: BaseMessage) -> bool:
    """Return True for a tool message whose body was already replaced by a placeholder."""
    return isinstance(message, ToolMessage) and content_text(message.content).startswith(
        CLEARED_PREFIX
    )


def validate_history(messages: Sequence[BaseMessage]) -> list[str]:
    """List every way ``messages`` breaks the chat-completions message rules.

    Rules: the first non-system message is a user message; every assistant tool call is
    answered by exactly one tool message carrying its id before the next assistant, user or
    system message; no tool message without a pending call (orphan or duplicate answer);
    tool call ids are unique within an assistant message.

    Returns:
        Human-readable problems; empty when the history is valid.
    """
    problems: list[str] = []
    pending: dict[str, int] = {}
    first = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), None)
    if first is not None and not isinstance(messages[first], HumanMessage):
        problems.append(f"message {first}: first non-system message is not a user message")
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if message.tool_call_id in pending:
                del pending[message.tool_call_id]
            else:
                problems.append(
                    f"message {index}: tool message {message.tool_call_id!r} answers no "
                    "pending tool call (orphan or duplicate)"
                )
            continue
        if pending:
            problems.append(
                f"message {index}: tool calls {sorted(pending)} were not answered before it"
            )
            pending.clear()
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id") or ""
                if not call_id or call_id in pending:
                    problems.append(f"message {index}: missing or repeated tool call id")
                pending[call_id] = index
    if pending:
        problems.append(f"end of history: tool calls {sorted(pending)} were never answered")
    return problems


def tool_calls_by_id(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """Map each tool call id to a short rendering of the call: name and clipped arguments."""
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id"):
                    args = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
                    if len(args) > PLACEHOLDER_ARGS_CHARS:
                        args = args[:PLACEHOLDER_ARGS_CHARS] + "…"
                    names[str(call["id"])] = f"{call.get('name', '')}{args}"
    return names


def error_line(text: str) -> str:
    """Return the first line that reports an error, looking at both ends of long text."""
    if len(text) > 2 * ERROR_SCAN_CHARS:
        text = f"{text[:ERROR_SCAN_CHARS]}\n{text[-ERROR_SCAN_CHARS:]}"
    for line in text.splitlines():
        if ERROR_LINE.search(line):
            line = line.strip()
            return line[:PLACEHOLDER_ERROR_CHARS]
    return ""


def _placeholder(message: ToolMessage, call: str) -> str:
    text = content_text(message.content)
    spilled = find_spill_path(text)
    where = f"full output at {spilled}" if spilled else "re-run the tool if you need it again"
    failure = error_line(_WRAPPER.sub("", text))
    noted = f"; error: {failure}" if failure else ""
    name = call or message.name or "tool"
    return f"{CLEARED_PREFIX} {name}, {len(text):,} chars{noted}; {where}]"


def clear_tool_results(
    messages: Sequence[BaseMessage], positions: Sequence[int]
) -> list[ToolMessage]:
    """Return replacements for the tool messages at ``positions`` with placeholder bodies.

    Each replacement keeps the message id, ``tool_call_id``, name and status, so applying them
    through the ``add_messages`` reducer edits in place: count, order and pairing unchanged.

    Raises:
        ValueError: A position does not hold a tool message.
    """
    names = tool_calls_by_id(messages)
    out: list[ToolMessage] = []
    for position in positions:
        message = messages[position]
        if not isinstance(message, ToolMessage):
            raise ValueError(f"message {position} is not a tool message")
        out.append(
            message.model_copy(
                update={"content": _placeholder(message, names.get(message.tool_call_id, ""))}
            )
        )
    return out


def user_words(text: str) -> str:
    """Return a user message without the context engram appended to it (memory, code map)."""
    head, sep, _ = text.partition(TURN_CONTEXT_MARK)
    return head if sep else text


def turn_context(message: BaseMessage) -> str:
    """Return the context block sent with a user message ("" if none or cleared).

    Kept beside the message (``attach_context``), or, in sessions of older versions, appended
    to its text.
    """
    if not isinstance(message, HumanMessage) or is_summary(message):
        return ""
    attached = attached_context(message)
    if attached:
        return "" if attached == CONTEXT_CLEARED else attached
    _, sep, block = content_text(message.content).partition(TURN_CONTEXT_MARK)
    return sep + block if sep else ""


def clear_turn_context(message: HumanMessage) -> HumanMessage:
    """Return the user message with its context replaced by a short marker.

    The user's own words, the message id and its position stay; only engram's retrieval
    output for that (finished) turn goes.
    """
    if attached_context(message):
        return attach_context(message, CONTEXT_CLEARED)
    text = user_words(content_text(message.content))
    return message.model_copy(update={"content": text + CONTEXT_CLEARED})


def missing_sections(summary: str) -> list[str]:
    """Return the required summary sections that ``summary`` lacks (case-insensitive)."""
    lowered = summary.lower()
    return [s for s in SUMMARY_SECTIONS if s.lower() not in lowered]


def rebuild_history(messages: Sequence[BaseMessage], cut: int, summary: str) -> list[BaseMessage]:
    """Build the compacted history: system messages, summary, acknowledgement, then the tail.

    Args:
        messages: The full history.
        cut: Index of the first message of the kept tail (a user message).
        summary: The four-section summary of everything before ``cut``.

    Returns:
        New history; the tail messages are the original objects (ids preserved).
    """
    head = [m for m in messages[:cut] if isinstance(m, SystemMessage)]
    return [
        *head,
        HumanMessage(content=f"{SUMMARY_HEADER}\n{summary.strip()}"),
        AIMessage(content=ACKNOWLEDGEMENT),
        *messages[cut:],
    ]


def commit_messages(new_history: Sequence[BaseMessage]) -> list[AnyMessage]:
    """Return the ``messages`` update that replaces the whole history under ``add_messages``."""
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new_history]  # type: ignore[list-item]
