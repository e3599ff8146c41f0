"""Stop a running turn on Ctrl-C: kill its commands, close its tool calls, say how to go on."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ["STOPPED", "close_stopped_calls", "step_of", "stop_child_groups", "stopped_message"]

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
    listed = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,pgid="], capture_output=True,
                            text=True, check=False).stdout
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


def close_stopped_calls(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """Return a "stopped" tool message for each call of the last assistant message left open."""
    if not messages or not isinstance(messages[-1], AIMessage):
        return []
    return [ToolMessage(content=STOPPED, tool_call_id=str(call["id"]), name=call["name"],
                        status="error") for call in messages[-1].tool_calls]


def stopped_message(step: str, thread_id: str, *, chat: bool) -> str:
    """Say what Ctrl-C stopped and how to go on."""
    what = STEP_NAMES.get(step, "the turn")
    go_on = ("send your next message to go on, or `engram sessions resume "
             f"{thread_id}` to let it finish" if chat else
             f"`engram sessions resume {thread_id}` finishes it; `engram run --thread "
             f"{thread_id} TASK` gives a new instruction")
    return f"stopped {what} (Ctrl-C); the session is saved: {go_on}"


def step_of(snapshot: Any) -> str:
    """Return the step a stopped turn was in, from its newest checkpoint."""
    pending = tuple(getattr(snapshot, "next", ()) or ())
    return str(pending[0]) if pending else ""
