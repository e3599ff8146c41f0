"""The OS sandbox every command engram starts runs in: bubblewrap on Linux, Seatbelt on macOS.

Under bubblewrap a sandboxed command (``run_command``, a verify check, an MCP stdio server) sees
the whole file system read-only, except the project and a private ``/tmp``; ``ENGRAM_HOME`` is
hidden (an empty folder); it has no network unless the run allows it (``sandbox_network``); it
runs in its own PID namespace, so nothing it starts — ``setsid``, ``nohup``, a daemon — outlives
it; and it gets a new terminal session, so it cannot type into the user's. On macOS, Seatbelt
(``sandbox-exec``) confines writes to the project and the temp folders, hides ``ENGRAM_HOME`` and
cuts the network the same way; it has no PID namespace, so there the process-group kill alone
stops what a command started. Setting ``sandbox``: ``auto`` (the default: a sandbox where one
works here, else approval alone guards, and the run says so), ``require`` (refuse to run a
command without one), ``off``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.graph._context import Context, SandboxMode
from engram.graph._errors import ToolError

SANDBOX_TMP = "/tmp"
"""The sandbox's private temp folder (a fresh tmpfs per command, the real entries shown
read-only)."""
MAX_TMP_ENTRIES = 2_000
"""Entries of the real ``/tmp`` bound back one by one; past this the fallback below is used."""
PRIVATE_TMP_FALLBACK = "/dev/shm"
"""Where a command's temp files go when ``/tmp`` holds too many entries to bind back."""
PROBE_TIMEOUT_S = 10
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


class SandboxUnavailableError(ToolError):
    """``sandbox = "require"`` and no sandbox works on this machine."""


@dataclass(frozen=True)
class Sandbox:
    """How commands of one run are confined: ``bubblewrap``, or ``none`` with the reason."""

    kind: Literal["bubblewrap", "seatbelt", "none"]
    reason: str = ""
    """Why there is none (for the note and ``engram doctor``); "" with bubblewrap."""
    network: bool = False
    """Whether sandboxed commands may reach the network."""
    program: str = ""

    @property
    def label(self) -> str:
        """Say in a few words what a command gets (approval prompt, ``--json``, doctor)."""
        if self.kind == "none":
            return f"none ({self.reason})"
        return self.kind + ("" if self.network else ", no network")

    def wrap(self, argv: list[str], *, project: Path, hidden: tuple[Path, ...] = ()) -> list[str]:
        """Return ``argv`` run inside the sandbox (unchanged without one).

        Args:
            argv: The program and its arguments.
            project: The one folder the command may write (besides its private ``/tmp``).
            hidden: Folders replaced by an empty one (``ENGRAM_HOME``), unless they hold the
                project.
        """
        if self.kind == "none":
            return argv
        if self.kind == "seatbelt":
            return [self.program, "-p", _seatbelt_profile(project, hidden, self.network), *argv]
        args = [
            self.program,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
        ]
        mounts, tmpdir = _private_tmp()
        args += mounts
        args += ["--bind", str(project), str(project)]
        for folder in hidden:  # after the project's bind, so a home inside it is hidden too
            if folder.is_dir() and not project.is_relative_to(folder):
                args += ["--tmpfs", str(folder)]
        args += [
            "--chdir",
            str(project),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--setenv",
            "TMPDIR",
            tmpdir,
        ]
        if not self.network:
            args.append("--unshare-net")
        return [*args, "--", *argv]


def _private_tmp() -> tuple[list[str], str]:
    """Return the mounts of a private ``/tmp`` that still shows what the real one holds.

    A fresh tmpfs takes the command's own temp files; each entry already in the real ``/tmp``
    is bound back read-only on top, because the project, a virtualenv or the program itself may
    live there (a checkout under ``/tmp``). Past ``MAX_TMP_ENTRIES`` the real ``/tmp`` is shown
    read-only as it is, and ``TMPDIR`` alone leads temp files to a private folder.

    Returns:
        The mounts, and the folder ``TMPDIR`` names.
    """
    try:
        entries = sorted(os.listdir(SANDBOX_TMP))
    except OSError:
        entries = []
    if len(entries) > MAX_TMP_ENTRIES:
        return ["--tmpfs", PRIVATE_TMP_FALLBACK], PRIVATE_TMP_FALLBACK
    args = ["--tmpfs", SANDBOX_TMP]
    for name in entries:
        path = os.path.join(SANDBOX_TMP, name)
        args += ["--ro-bind-try", path, path]
    return args, SANDBOX_TMP


def _seatbelt_profile(project: Path, hidden: tuple[Path, ...], network: bool) -> str:
    """Return the macOS ``sandbox-exec`` profile: writes only to the project and temp."""

    def quoted(path: Path | str) -> str:
        return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    rules = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        f'(allow file-write* (subpath {quoted(project)}) (subpath "/private/tmp")'
        ' (subpath "/private/var/folders") (literal "/dev/null")'
        ' (literal "/dev/tty"))',
    ]
    rules += [
        f"(deny file-read* (subpath {quoted(folder)}))"
        for folder in hidden
        if not project.is_relative_to(folder)
    ]
    if not network:
        rules.append("(deny network*)")
    return "".join(rules)


@functools.cache
def _bubblewrap_works(program: str) -> str:
    """Return "" when bubblewrap can make a sandbox here, else why not (probed once)."""
    try:
        done = subprocess.run(
            [
                program,
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-pid",
                "--unshare-net",
                "--die-with-parent",
                "true",
            ],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not start: {exc}"
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot make a sandbox here: {detail}"
    return ""


def find_sandbox(mode: SandboxMode, *, network: bool = False) -> Sandbox:
    """Return the sandbox commands get under ``mode``.

    Raises:
        SandboxUnavailableError: ``mode`` is ``require`` and none works here.
    """
    if mode == "off":
        return Sandbox("none", "sandbox = off", network=True)
    seatbelt = shutil.which("sandbox-exec") if sys.platform == "darwin" else None
    if seatbelt:
        return Sandbox("seatbelt", network=network, program=seatbelt)
    program = shutil.which("bwrap")
    reason = (
        _bubblewrap_works(program) if program else f"bubblewrap is not installed; {INSTALL_HINT}"
    )
    if not reason and program:
        return Sandbox("bubblewrap", network=network, program=program)
    if mode == "require":
        raise SandboxUnavailableError(
            f"no sandbox for commands: {reason}", hint=f"{INSTALL_HINT}, or set sandbox = auto"
        )
    return Sandbox("none", reason, network=True)


def sandbox_label(context: Context) -> str:
    """Say what the run's commands get, or that they are refused (``require``, none here)."""
    try:
        return sandbox_for(context).label
    except SandboxUnavailableError as exc:
        return f"refused: {exc}"


def sandbox_for(context: Context) -> Sandbox:
    """Return the sandbox of a run's commands (its ``sandbox`` and ``sandbox_network``).

    Raises:
        SandboxUnavailableError: ``sandbox = "require"`` and none works here.
    """
    return find_sandbox(context.sandbox, network=context.sandbox_network)
