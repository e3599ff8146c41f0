"""The model's ``run_command`` tool: a shell command in the project root, bounded and scrubbed."""

from __future__ import annotations

import codecs
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from engram.graph._context import Context
from engram.graph._errors import ToolError
from engram.graph._sandbox import Sandbox, sandbox_for
from engram.graph.tools._command_stream import command_stream
from engram.stores import without_secrets

COMMAND_TOOL_NAME = "run_command"
DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 1_800
"""Longest a command may run (30 minutes), whatever the model asks for."""
MAX_CAPTURE_BYTES = 2_000_000
"""Output kept from one command; the rest is dropped (what is kept may still be spilled)."""
MAX_SPOOL_BYTES = 64_000_000
"""Output a command may write at all: past it the command is stopped (the disk stays free)."""
COMMAND_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": ""}
"""Set for every command so nothing waits for a pager or a password prompt."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
STOP_GRACE_S = 10
"""Time past a command's own limit for stopping it and collecting its output."""
OUTPUT_POLL_S = 0.1
"""How often a watched command's new output is passed on."""


def _limit(timeout_s: Any) -> int:
    try:
        return max(1, min(int(timeout_s), MAX_TIMEOUT_S))
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT_S


def command_time_limit(args: Mapping[str, Any]) -> float:
    """Return how long a ``run_command`` call may take, stopping included (seconds)."""
    return _limit(args.get("timeout_s", DEFAULT_TIMEOUT_S)) + STOP_GRACE_S


def scrubbed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Return ``environ`` without secrets (see ``stores.secrets``), with ``COMMAND_ENV`` set."""
    return {**without_secrets(environ), **COMMAND_ENV}


@dataclass(frozen=True)
class CommandResult:
    """What a finished (or stopped) command left."""

    exit_code: int | None
    """The exit status; None when the command was stopped at its timeout."""
    output: str
    """Standard output and error, interleaved, without colour codes."""
    seconds: float
    truncated: bool
    stopped: str = ""
    """Why it was stopped: ``timeout``, ``output`` (past ``MAX_SPOOL_BYTES``), or ""."""


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command's process group (its children too), if any of it is still alive."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _OutputTail:
    """Passes on what a command wrote to its output file since the last look, as text."""

    def __init__(self, sink: Any, on_output: Callable[[str], None]) -> None:
        self.sink = sink
        self.on_output = on_output
        self.offset = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def forward(self, final: bool = False) -> None:
        # pread leaves the file offset alone: the command shares it and keeps appending
        while self.offset < MAX_CAPTURE_BYTES:
            data = os.pread(self.sink.fileno(), 65_536, self.offset)
            if not data:
                break
            self.offset += len(data)
            text = _ANSI.sub("", self.decoder.decode(data))
            if text:
                self.on_output(text)
        rest = self.decoder.decode(b"", final=True) if final else ""
        if rest:
            self.on_output(rest)


def _wait(
    process: subprocess.Popen[bytes], timeout_s: float, tail: _OutputTail | None, sink: IO[bytes]
) -> tuple[int | None, str]:
    """Wait for the command, passing its output on while it runs.

    Returns:
        The exit code and "", or None and why it was stopped: ``timeout``, or ``output`` when
        it wrote more than ``MAX_SPOOL_BYTES`` (nothing fills the disk).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            wait = max(0.0, min(OUTPUT_POLL_S, deadline - time.monotonic()))
            return process.wait(timeout=wait), ""
        except subprocess.TimeoutExpired:
            if tail is not None:
                tail.forward()
            if os.fstat(sink.fileno()).st_size > MAX_SPOOL_BYTES:
                return None, "output"
            if time.monotonic() >= deadline:
                return None, "timeout"


def run_shell(
    root: Path,
    command: str,
    timeout_s: float,
    env: Mapping[str, str],
    on_output: Callable[[str], None] | None = None,
    *,
    sandbox: Sandbox | None = None,
    hidden: tuple[Path, ...] = (),
) -> CommandResult:
    """Run ``command`` through the shell in ``root`` with no stdin; capture bounded output.

    The command gets its own process group, killed when it times out (and after it exits, so
    nothing it started in the background outlives it), and runs in ``sandbox`` when one is
    given (``hidden`` folders, such as ENGRAM_HOME, are empty inside it). ``on_output``
    receives the output as it is written (colour codes removed), for a live view.
    """
    started = time.monotonic()
    argv = ["/bin/sh", "-c", command]
    if sandbox is not None:
        argv = sandbox.wrap(argv, project=root, hidden=hidden)
    with tempfile.TemporaryFile() as sink:
        process = subprocess.Popen(
            argv,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=dict(env),
            start_new_session=True,
        )
        tail = None if on_output is None else _OutputTail(sink, on_output)
        try:
            exit_code, stopped = _wait(process, timeout_s, tail, sink)
        finally:
            _stop_group(process)
            process.wait()
        if tail is not None:
            tail.forward(final=True)
        sink.seek(0)
        data = sink.read(MAX_CAPTURE_BYTES + 1)
    text = _ANSI.sub("", data[:MAX_CAPTURE_BYTES].decode("utf-8", errors="replace"))
    return CommandResult(
        exit_code, text, time.monotonic() - started, len(data) > MAX_CAPTURE_BYTES, stopped
    )


def format_result(command: str, result: CommandResult) -> str:
    """Render a command's outcome for the model: the command, exit code, time, output."""
    cut = f"\n[output cut at {MAX_CAPTURE_BYTES:,} bytes]" if result.truncated else ""
    body = result.output.rstrip("\n") or "(no output)"
    return f"$ {command}\nexit code {result.exit_code} · {result.seconds:.1f} s\n{body}{cut}"


class RunCommandArgs(BaseModel):
    """Arguments of ``run_command``."""

    command: str = Field(description="Shell command, run in the project root (no stdin).")
    timeout_s: int = Field(
        default=DEFAULT_TIMEOUT_S,
        description=f"Seconds before it is stopped (at most {MAX_TIMEOUT_S}).",
    )


def build_command_tool(context: Context) -> BaseTool:
    """Return ``run_command`` bound to the run's project root."""
    root = context.project_path

    def run_command(command: str, timeout_s: int = DEFAULT_TIMEOUT_S) -> str:
        if not command.strip():
            raise ToolError("the command is empty")
        limit = _limit(timeout_s)
        result = run_shell(
            root,
            command,
            limit,
            scrubbed_environment(os.environ),
            command_stream(command, COMMAND_TOOL_NAME),
            sandbox=sandbox_for(context),
            hidden=(context.home_path,),
        )
        if result.stopped == "output":
            raise ToolError(
                f"stopped: it wrote more than {MAX_SPOOL_BYTES:,} bytes of output; the command "
                f"and its children were stopped\n{format_result(command, result)}",
                hint="write less output (a filter such as head or grep -c, or quieter flags)",
            )
        if result.exit_code is None:
            raise ToolError(
                f"timed out after {limit} s; the command and its children were stopped\n"
                f"{format_result(command, result)}",
                hint="pass a larger timeout_s, or run a narrower command",
            )
        return format_result(command, result)

    return StructuredTool.from_function(
        func=run_command,
        name=COMMAND_TOOL_NAME,
        args_schema=RunCommandArgs,
        description="Run a shell command in the project root (tests, linters, builds) and get "
        "its exit code and output. Commands that wait for input fail: stdin is empty.",
    )
