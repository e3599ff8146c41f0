"""Show a turn as it happens: streamed model text, edit diffs, command output and a spinner.

Used only in a terminal; without one (or with ``--json``) the turn runner prints the plain
per-step lines of ``show_update`` and nothing else.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.syntax import Syntax

from engram.graph.tools import COMMAND_EVENT, EDIT_TOOL_NAMES, OUTPUT_EVENT

LIVE_STREAM_MODES = ["updates", "messages", "custom", "tasks"]
"""What the graph streams to a terminal: node results, model tokens, command output, steps."""
MODEL_NODE = "call_model"
STEP_LABELS = {
    "call_model": "waiting for the model",
    "compact_history": "compacting the history",
    "run_tools": "running tools",
    "verify_changes": "running the checks",
    "search_exact": "gathering context",
    "search_semantic": "gathering context",
    "pack_context": "packing the context",
}
"""Spinner text while a long step runs."""
DIFF_LINES = 80
"""Lines of an edit's diff shown in the terminal (the rest is counted)."""


def is_live(as_json: bool = False) -> bool:
    """Return True when a person watches: stdin and stdout are terminals and no JSON is asked."""
    if as_json:
        return False
    try:
        return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except ValueError:  # a closed stream
        return False


def describe_call(call: dict[str, Any]) -> str:
    """Return ``name(arg=value, …)`` for a tool call, cut to one line."""
    args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
    return f"{call['name']}({args[:160]})"


def show_update(console: Console, update: Any) -> None:
    """Print one node's result as plain lines: tool calls, tool results, notes."""
    if not isinstance(update, dict):
        return
    for message in update.get("messages") or []:
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                console.print(f"[cyan]→[/] {describe_call(dict(call))}")
        elif isinstance(message, ToolMessage):
            mark = "[red]✗[/]" if message.status == "error" else "[green]✓[/]"
            console.print(f"  {mark} [dim]{message.name}: {len(str(message.content))} chars[/]")
    for note in update.get("notes") or []:
        console.print(f"[yellow]note:[/] {note}")


def diff_syntax(diff: str) -> Syntax:
    """Return a unified diff coloured for the terminal."""
    return Syntax(diff, "diff", theme="ansi_dark", background_color="default", word_wrap=True)


def result_diff(content: str) -> str:
    """Return the unified diff an edit tool's result carries (``""`` when there is none)."""
    lines = content.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("--- ")), None)
    if start is None:
        return ""
    body = [line for line in lines[start:] if not line.startswith("</tool_result")]
    if len(body) > DIFF_LINES:
        body = [*body[:DIFF_LINES], f"… {len(body) - DIFF_LINES} more lines"]
    return "\n".join(body)


class LiveView:
    """Renders the events of a live graph stream to the terminal."""

    def __init__(self, out: Console, err: Console) -> None:
        """Stream model text to ``out``; progress, diffs and command output go to ``err``."""
        self.out = out
        self.err = err
        self.status: Status | None = None
        self.streamed = False
        """Whether any model text of the turn was streamed (the answer need not be reprinted)."""
        self._mid_line = False
        self._shown_diffs: set[str] = set()
        self._partial = ""
        """A command's last output line, until its end arrives."""
        self.step = ""
        """The step running now (a node name): its end stops the spinner its start began."""

    def handle(self, mode: str, data: Any) -> None:
        """Render one ``(mode, data)`` item of ``astream(stream_mode=LIVE_STREAM_MODES)``."""
        if mode == "messages":
            chunk, metadata = data
            if (metadata or {}).get("langgraph_node") == MODEL_NODE:
                self._token(chunk)
        elif mode == "tasks" and isinstance(data, dict):
            self._task(data)
        elif mode == "custom" and isinstance(data, dict):
            self._custom(data)
        elif mode == "updates" and isinstance(data, dict):
            self._end_line()
            self._flush_output()
            for node, update in data.items():
                if node != "__interrupt__":
                    show_update(self.err, update)
                    self._diffs(update)

    def shown_in_approval(self, payload: dict[str, Any]) -> None:
        """Remember that the approval question already showed this call's diff."""
        self.pause()
        self._shown_diffs.add(str(payload.get("call_id")))

    def pause(self) -> None:
        """Stop the spinner and finish a streamed line (before a question or the answer)."""
        if self.status is not None:
            self.status.stop()
            self.status = None
        self._end_line()

    def _spin(self, label: str) -> None:
        if self.status is None:
            self.status = self.err.status(label, spinner="dots")
            self.status.start()
        else:
            self.status.update(label)

    def _task(self, data: dict[str, Any]) -> None:
        name = str(data.get("name", ""))
        if "input" in data:  # a step starts
            self.step = name
            if name in STEP_LABELS:
                self._spin(STEP_LABELS[name])
        elif name == self.step and self.status is not None:
            self.status.stop()
            self.status = None

    def _token(self, chunk: Any) -> None:
        if not isinstance(chunk, AIMessageChunk):
            return
        text = streamed_text(chunk.content)
        if not text:
            return
        if self.status is not None:
            self.status.stop()
            self.status = None
        self.out.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        self.streamed = self._mid_line = True

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False

    def _custom(self, data: dict[str, Any]) -> None:
        if data.get("event") == COMMAND_EVENT:
            self._end_line()
            self._flush_output()
            verb = "checking" if data.get("source") == "verify" else "running"
            self.err.print(f"[bold]$[/] {escape(str(data.get('command')))}", highlight=False)
            self._spin(f"{verb}: {data.get('command')}")
        elif data.get("event") == OUTPUT_EVENT:
            *lines, self._partial = (self._partial + str(data.get("text", ""))).split("\n")
            for line in lines:
                self.err.print(line, style="dim", markup=False, highlight=False)

    def _flush_output(self) -> None:
        if self._partial:
            self.err.print(self._partial, style="dim", markup=False, highlight=False)
            self._partial = ""

    def _diffs(self, update: Any) -> None:
        if not isinstance(update, dict):
            return
        for message in update.get("messages") or []:
            if not isinstance(message, ToolMessage) or message.name not in EDIT_TOOL_NAMES:
                continue
            if message.status == "error" or message.tool_call_id in self._shown_diffs:
                continue
            diff = result_diff(str(message.content))
            if diff:
                self.err.print(diff_syntax(diff))


def streamed_text(content: str | list[Any]) -> str:
    """Return the answer text of a streamed piece: a string, or its text blocks.

    Reasoning and tool-call blocks are not the answer.
    """
    if isinstance(content, str):
        return content
    return "".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type", "text") == "text"
        and isinstance(block.get("text"), str)
    )
