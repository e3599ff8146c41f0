"""Stop a running turn on Ctrl-C: kill its commands, close its tool calls, say how to go on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

STOPPED = (
    "stopped by the user (Ctrl-C) while this step ran: the call may not have finished, and "
    "whatever it had already changed was kept. Ask the user before running it again."
)
"""Body of the tool message that answers a call stopped by Ctrl-C."""
STEP_NAMES = {
    "call_model": "the model call",
    "run_tools": "the tool step (edits, commands)",
    "verify_changes": "the checks",
    "compact_history": "the compaction",
    "review_actions": "at the approval question",
}


def _children() -> list[tuple[int, int]]:
    """Return ``(pid, process group)`` of each child of this process."""
    me = os.getpid()
    proc = Path("/proc")
    found: list[tuple[int, int]] = []
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                # the command name may hold spaces and parentheses: fields follow the last ")"
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:  # it exited meanwhile
                continue
            if int(fields[1]) == me:
                found.append((int(entry.name), int(fields[2])))
        return found
    listed = subprocess.run(
        ["ps", "-A", "-o", "pid=,ppid=,pgid="], capture_output=True, text=True, check=False
    ).stdout
    for line in listed.splitlines():
        pid, ppid, pgid = (int(x) for x in line.split())
        if ppid == me:
            found.append((pid, pgid))
    return found


def stop_child_groups() -> list[int]:
    """Kill the process groups this process started (commands, checks, MCP servers).

    Commands run as leaders of their own process group (so a terminal's Ctrl-C does not reach
    them, and their children die with them): the children that lead their group are exactly
    those. Returns the groups killed.
    """
    killed: list[int] = []
    for pid, group in _children():
        if pid != group:
            continue
        try:
            os.killpg(group, signal.SIGKILL)
            killed.append(group)
        except (ProcessLookupError, PermissionError):
            continue
    return killed


class StoppedAtQuestion(Exception):
    """Ctrl-C was pressed while a question waited for an answer."""


class SigintStop:
    """While a turn runs, Ctrl-C kills its commands and cancels it instead of the process.

    The loop's handler runs between steps; at a question (a blocking prompt) Ctrl-C
    interrupts the prompt itself, and the question stays pending for the next resume.
    """

    def __init__(self) -> None:
        """Bind to the running loop and the current task (the turn)."""
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.stopping = False
        self.installed = False

    def _on_sigint(self) -> None:
        if self.stopping:  # the same Ctrl-C, seen again through the loop's wake-up pipe
            return
        self.stopping = True
        stop_child_groups()  # a command in a worker thread would otherwise run on
        if self.task is not None:
            self.task.cancel()

    def __enter__(self) -> SigintStop:
        """Install the handler (where signals can be handled: the main thread)."""
        try:
            self.loop.add_signal_handler(signal.SIGINT, self._on_sigint)
            self.installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            pass
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Put Python's own Ctrl-C handling back."""
        if self.installed:
            self.loop.remove_signal_handler(signal.SIGINT)

    def ask(
        self, approve: Callable[[dict[str, Any]], dict[str, Any]], payload: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask a question; Ctrl-C at the prompt stops the turn with the question pending.

        Raises:
            StoppedAtQuestion: Ctrl-C was pressed while the question waited.
        """
        if not self.installed or threading.current_thread() is not threading.main_thread():
            return approve(payload)

        def at_prompt(signum: int, frame: FrameType | None) -> None:
            self.stopping = True
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, at_prompt)
        try:
            answer = approve(payload)
        except KeyboardInterrupt:
            answer = {}
        finally:
            signal.signal(signal.SIGINT, previous)
        if self.stopping:
            raise StoppedAtQuestion
        return answer


def close_stopped_calls(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """Return a "stopped" tool message for each call of the last assistant message left open."""
    if not messages or not isinstance(messages[-1], AIMessage):
        return []
    return [
        ToolMessage(
            content=STOPPED, tool_call_id=str(call["id"]), name=call["name"], status="error"
        )
        for call in messages[-1].tool_calls
    ]


def stopped_message(step: str, thread_id: str, *, chat: bool) -> str:
    """Say what Ctrl-C stopped and how to go on."""
    what = STEP_NAMES.get(step, "the turn")
    go_on = (
        f"send your next message to go on, or `engram sessions resume {thread_id}` to let it finish"
        if chat
        else f"`engram sessions resume {thread_id}` finishes it; `engram run --thread "
        f"{thread_id} TASK` gives a new instruction"
    )
    return f"stopped {what} (Ctrl-C); the session is saved: {go_on}"


def step_of(snapshot: Any) -> str:
    """Return the step a stopped turn was in, from its newest checkpoint."""
    pending = tuple(getattr(snapshot, "next", ()) or ())
    return str(pending[0]) if pending else ""
