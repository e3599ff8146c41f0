"""Tool calls the model got wrong: answered with an error the model can act on, never run.

A model sometimes sends a tool call whose arguments are not JSON (cut off, a stray quote) or
not a JSON object. LangChain keeps the first kind apart as ``invalid_tool_calls``; a reply
holding only those would read as a final answer (an empty one), and the call would stay
unanswered in the history. Here each becomes an ordinary call with no arguments whose id is
listed, with the reason, in the message's ``additional_kwargs`` (``MALFORMED_CALLS``): the
tools node answers it with that reason and runs nothing, so the model can call again.

Every call of a reply also gets an id of its own. Reviews, results and their pairing are all
keyed by call id; two calls sharing one (a model's, or a server's that numbers calls per
reply) would share one review, so a command the user rejected would run on the approval given
to the edit beside it. A missing or repeated id is replaced by a fresh one before anything
reads the reply.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from langchain_core.messages import AIMessage

MALFORMED_CALLS = "engram_malformed_tool_calls"
"""Key of an assistant message's ``additional_kwargs``: call id -> why its arguments could not
be read."""
SHOWN_ARGUMENT_CHARS = 200
"""Characters of the unreadable arguments quoted back to the model."""
UNNAMED_TOOL = "unnamed_tool"
"""Name given to a call the model sent without one (a history needs a name for every call)."""


def answerable(reply: AIMessage) -> AIMessage:
    """Return ``reply`` with one id per call, invalid calls turned into calls answered with why."""
    ids = [c.get("id") for c in (*reply.tool_calls, *reply.invalid_tool_calls)]
    if not reply.invalid_tool_calls and all(ids) and len(set(ids)) == len(ids):
        return reply
    reasons: dict[str, str] = dict(reply.additional_kwargs.get(MALFORMED_CALLS) or {})
    seen: set[str] = set()
    calls: list[Any] = []
    for call in reply.tool_calls:
        calls.append({**call, "id": _own_id(call.get("id"), seen), "type": "tool_call"})
    for bad in reply.invalid_tool_calls:
        call_id = _own_id(bad.get("id"), seen)
        calls.append(
            {
                "name": bad.get("name") or UNNAMED_TOOL,
                "args": {},
                "id": call_id,
                "type": "tool_call",
            }
        )
        reasons[call_id] = _reason(bad.get("args"))
    kwargs = {**reply.additional_kwargs, MALFORMED_CALLS: reasons} if reasons else None
    return reply.model_copy(
        update={
            "tool_calls": calls,
            "invalid_tool_calls": [],
            "additional_kwargs": kwargs or reply.additional_kwargs,
        }
    )


def _own_id(call_id: str | None, seen: set[str]) -> str:
    """Return ``call_id``, or a fresh id when it is missing or already in ``seen`` (noted)."""
    fresh = call_id if call_id and call_id not in seen else f"call_{uuid.uuid4().hex[:24]}"
    seen.add(fresh)
    return fresh


def malformed_reason(message: AIMessage, call_id: str) -> str | None:
    """Return why the call ``call_id`` of ``message`` was not run, None for a readable call."""
    reasons = message.additional_kwargs.get(MALFORMED_CALLS)
    if not isinstance(reasons, dict):
        return None
    reason = reasons.get(call_id)
    return str(reason) if reason is not None else None


def _reason(raw: str | None) -> str:
    text = raw or ""
    try:
        value = json.loads(text)
    except ValueError as exc:
        problem = f"not valid JSON ({getattr(exc, 'msg', exc)})"
    else:
        problem = f"JSON, but not an object ({type(value).__name__})"
    shown = json.dumps(text[:SHOWN_ARGUMENT_CHARS], ensure_ascii=False)
    more = " …" if len(text) > SHOWN_ARGUMENT_CHARS else ""
    return (
        f"error: the call's arguments were {problem}: {shown}{more}. Nothing ran. "
        "Call the tool again with its arguments as one JSON object."
    )
