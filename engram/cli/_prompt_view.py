"""Show exactly what a model request holds: live before sending, or rebuilt from the ledger."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from rich.console import Console

from engram.stores import message_record


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, indent=1)


def request_text(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
    """Render a request's messages in full, in the order sent, with the tools offered."""
    names = [str((t.get("function") or t).get("name", "?")) for t in tools]
    lines = [f"tools offered: {', '.join(names) if names else 'none'}"]
    for message in messages:
        head = f"--- {message.get('role')}"
        if message.get("tool_call_id"):
            head += f" (result of {message.get('name') or 'tool'} call {message['tool_call_id']})"
        lines.append(head)
        text = _content(message.get("content", ""))
        if text:
            lines.append(text)
        for call in message.get("tool_calls") or []:
            args = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
            lines.append(f"[calls {call.get('name')}({args}) id={call.get('id')}]")
    return "\n".join(lines)


def print_request(
    console: Console,
    title: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
) -> None:
    """Print one request under a rule; the text is printed verbatim (no markup, no wrapping)."""
    console.rule(title)
    console.print(request_text(messages, tools), markup=False, highlight=False, soft_wrap=True)


class PromptPrinter(BaseCallbackHandler):
    """LangChain callback that prints each chat request just before it is sent."""

    run_inline = True

    def __init__(self, console: Console) -> None:
        """Print to ``console`` (the CLI's stderr console, so ``--json`` output stays clean)."""
        self.console = console
        self.calls = 0

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Print the messages and tool schemas the chat model is about to receive."""
        params = kwargs.get("invocation_params") or {}
        tools = list(params.get("tools") or [])
        for batch in messages:
            self.calls += 1
            print_request(
                self.console,
                f"prompt of model call {self.calls}",
                [message_record(m) for m in batch],
                tools,
            )
