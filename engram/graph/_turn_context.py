"""The context engram adds to a user's message, kept beside the message, not in its text.

The memory block and the code context of a turn are sent appended to that turn's user
message (after the history, so the cached prefix of the request stays byte-identical), but in
state the message keeps exactly what the user typed: the block rides in the message's
``additional_kwargs`` and ``as_sent`` joins the two when a request is built, the same bytes
every time. Studio, ``sessions show`` and titles show the user's words; the ledger records
the request as sent.

Sessions written before this kept the block inside the message text; ``attached_context`` and
the compaction rules still read that form.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

TURN_CONTEXT_KEY = "engram_turn_context"
"""Key in a user message's ``additional_kwargs`` holding the context sent with it."""


def attached_context(message: BaseMessage) -> str:
    """Return the context kept beside a user message ("" when none)."""
    if not isinstance(message, HumanMessage):
        return ""
    value = message.additional_kwargs.get(TURN_CONTEXT_KEY, "")
    return value if isinstance(value, str) else ""


def attach_context(message: HumanMessage, appended: str) -> HumanMessage:
    """Return ``message`` carrying ``appended`` (sent after its text, separator included)."""
    extra = {**message.additional_kwargs, TURN_CONTEXT_KEY: appended}
    return message.model_copy(update={"additional_kwargs": extra})


def as_sent(message: BaseMessage) -> BaseMessage:
    """Return the message as the model gets it: its text with the attached context after it."""
    appended = attached_context(message)
    if not appended:
        return message
    kept = {k: v for k, v in message.additional_kwargs.items() if k != TURN_CONTEXT_KEY}
    content = message.content
    if isinstance(content, str):
        joined: str | list[str | dict[str, object]] = content + appended
    else:
        joined = [*content, {"type": "text", "text": appended.lstrip("\n")}]
    return message.model_copy(update={"content": joined, "additional_kwargs": kept})
