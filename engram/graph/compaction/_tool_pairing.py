"""Close tool calls that lost their results, so a forked or replayed history stays sendable.

A session forked (or replayed) at a checkpoint whose next step is ``run_tools`` holds an
assistant message whose tool calls were never run. Sending a new user message after it breaks
the chat-completions rules, and every OpenAI-compatible endpoint answers HTTP 400. The repair
answers each such call with an explicit "not run" tool message placed right after the calls'
own results, and drops tool messages that answer no pending call (orphans and duplicates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

NOT_RUN = (
    "not run: this tool call was still pending when the session was forked, replayed or "
    "stopped, and a new message came after it; call the tool again if you still need its result"
)
"""Body of the tool message that closes a call that never ran."""
NOT_RUN_ID_PREFIX = "not-run-"
"""Message id prefix of the closing tool messages (followed by the tool call id)."""


@dataclass(frozen=True)
class PairingRepair:
    """A repaired history and what the repair changed."""

    messages: list[BaseMessage]
    """The whole history, every tool call answered, ready to replace the old one."""
    closed: list[ToolMessage]
    """The "not run" tool messages that were added."""
    dropped: list[ToolMessage]
    """Tool messages that answered no pending call and were removed."""

    def note(self) -> str:
        """Return one line for the session's notes."""
        parts = []
        if self.closed:
            parts.append(f"closed {len(self.closed)} tool call(s) that never ran as 'not run'")
        if self.dropped:
            parts.append(f"dropped {len(self.dropped)} tool result(s) that answered no call")
        return "repaired the session history: " + "; ".join(parts)


def _not_run(call_id: str, name: str) -> ToolMessage:
    return ToolMessage(
        content=NOT_RUN,
        tool_call_id=call_id,
        name=name,
        status="error",
        id=f"{NOT_RUN_ID_PREFIX}{call_id}",
    )


def close_unanswered_calls(messages: Sequence[BaseMessage]) -> PairingRepair | None:
    """Answer every unanswered tool call and drop unpaired tool messages.

    A call counts as unanswered when a message other than a tool message (a user, assistant
    or system message, or the end of the history) follows before its result. The closing
    message goes where the result belonged: after the results its assistant message did get.

    Returns:
        The repair, or None when every call is already paired with exactly one result.
    """
    out: list[BaseMessage] = []
    pending: dict[str, str] = {}
    closed: list[ToolMessage] = []
    dropped: list[ToolMessage] = []

    def close_pending() -> None:
        for call_id, name in pending.items():
            closed.append(_not_run(call_id, name))
            out.append(closed[-1])
        pending.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            if pending.pop(message.tool_call_id, None) is None:
                dropped.append(message)
            else:
                out.append(message)
            continue
        close_pending()
        out.append(message)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id"):
                    pending.setdefault(str(call["id"]), call["name"])
    close_pending()
    if not closed and not dropped:
        return None
    return PairingRepair(out, closed, dropped)
