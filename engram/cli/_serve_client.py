"""Hand a command to the warm server (``engram serve``), starting one when none answers.

Standard library only: ``engram.cli._entry`` calls ``forward`` for the commands it lists
(``FORWARDED``) before Typer, Rich or any store is imported, so a forwarded command costs the
client a Python start, a few ``stat`` calls and one round trip. ``forward`` returns None
whenever the command should run in this process instead: forwarding is off
(``ENGRAM_SERVE=off``), no server answers (one is then started in the background for the next
command), the server refuses (another code version: it is asked to stop), its files are
unsafe, or it does not answer in time. It is None too when the server dies during the command
before the command wrote to this process's output or error or read its input (the server says
``io`` just before the first time): nothing the user can see happened yet, so the command runs
here. Once it did, the client reports the death instead of running the command twice.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from pathlib import Path

from engram._switches import OFF_VALUES
from engram.cli._serve_paths import (
    ServePaths,
    UnsafeSocketError,
    check_folders,
    check_socket_file,
    code_version,
    serve_paths,
)
from engram.cli._serve_wire import WireError, receive_message, send_message

CONNECT_TIMEOUT_S = 0.5
ACCEPT_TIMEOUT_S = 3.0
QUEUE_WAIT_S = 2.0
"""Longest wait behind another client's command before running this one here instead: the
server runs one command at a time, and one may be slow or held by a reader that stopped
reading (``engram context … | less`` left open)."""
"""How long the server may take to accept a request before the client runs it itself."""
EXIT_SERVER_LOST = 1
EXIT_INTERRUPTED = 130
PEER_CREDENTIALS = struct.Struct("3i")
BOOT = "import sys; sys.argv[0] = 'engram'; from engram.cli._entry import main; main()"
"""How a background server is started: this Python, this ``engram`` package."""


def server_argv() -> list[str]:
    """Return the command line of a background server.

    ``-P``: nothing is put before the installed packages on ``sys.path``. With ``-c`` Python
    would put ``""``, the current folder, there; the server changes into each client's project
    folder, so a module a repository ships (``csv.py``, ``yaml/``) would be imported in the
    server in place of the real one the first time a command needs it.
    """
    return [sys.executable, "-P", "-c", BOOT, "serve"]


def serve_enabled() -> bool:
    """Return False when ``ENGRAM_SERVE`` turns the warm server off (``off``, ``0``, ...)."""
    return os.environ.get("ENGRAM_SERVE", "").strip().lower() not in OFF_VALUES


DESCRIPTOR_FOLDERS = ("/dev/fd/", "/proc/self/fd/")
"""Paths that name one of this process's own descriptors (``--batch <(…)`` gives one)."""


def names_own_descriptor(args: list[str]) -> bool:
    """Return True when an argument is a path to a descriptor other than 0-2.

    Only standard input, output and error reach the server, which would find no such file.
    """
    for arg in args:
        value = arg.split("=", 1)[-1] if arg.startswith("--") else arg
        for folder in DESCRIPTOR_FOLDERS:
            if value.startswith(folder) and value[len(folder) :] not in ("0", "1", "2"):
                return True
    return False


def forward(args: list[str]) -> int | None:
    """Run ``engram ARGS`` on the warm server; return its exit code, or None to run it here."""
    if names_own_descriptor(args):
        return None
    paths = serve_paths()
    try:
        check_folders(paths, create=False)
        check_socket_file(paths.socket)
    except FileNotFoundError:
        start_server(paths)
        return None
    except UnsafeSocketError as exc:
        sys.stderr.write(f"engram: not using the warm server: {exc}\n")
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None  # the folder is gone: the command says so itself
    sock = connect(paths.socket)
    if sock is None:
        start_server(paths)  # a dead server's socket: the new one replaces it
        return None
    with sock:
        return _converse(sock, args, cwd, paths)


def connect(path: Path) -> socket.socket | None:
    """Connect to the server at ``path``; None when nobody (or another user) listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(os.fspath(path))
        _pid, uid, _gid = PEER_CREDENTIALS.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
        )
    except OSError:
        sock.close()
        return None
    if uid != os.getuid():
        sock.close()
        return None
    return sock


def _converse(sock: socket.socket, args: list[str], cwd: str, paths: ServePaths) -> int | None:
    """Send the request with this process's standard streams; wait for the exit code."""
    request = {
        "op": "run",
        "version": code_version(),
        "argv": args,
        "prog_name": _prog_name(),
        "cwd": cwd,
        "env": dict(os.environ),
        "streams": [_stream_settings(stream) for stream in (sys.stdout, sys.stderr)],
    }
    sock.settimeout(ACCEPT_TIMEOUT_S)
    try:
        send_message(sock, request)
        reply, _ = receive_message(sock)
    except (OSError, WireError):
        return None
    except KeyboardInterrupt:  # before the server took the command: nothing ran
        return EXIT_INTERRUPTED
    if "refused" in reply:
        if reply.get("refused") == "version":
            start_server(paths)  # the old server stops; the next command finds a new one
        return None
    # Queued behind another command: give up after QUEUE_WAIT_S and run it here (the server
    # runs nothing without this client's descriptors, which it has not had yet). Once they
    # are sent the command is the server's: no limit.
    sock.settimeout(QUEUE_WAIT_S)
    started = interrupted = used_streams = False
    while True:
        try:
            message, _ = receive_message(sock)
            if message.get("ready"):
                sock.settimeout(None)
                send_message(sock, {"streams": True}, fds=[0, 1, 2])
        except (OSError, WireError):
            if interrupted:
                return EXIT_INTERRUPTED
            if not used_streams:  # nothing written or read yet: run it here instead
                if started:
                    start_server(paths)  # the server died: a new one for the next command
                return None
            return _lost(paths)
        except KeyboardInterrupt:
            if interrupted:  # a second Ctrl-C: stop waiting for the server's answer
                return EXIT_INTERRUPTED
            interrupted = True
            try:
                send_message(sock, {"interrupt": True})
            except OSError:
                return EXIT_INTERRUPTED
            continue
        if message.get("started"):
            started = True
        elif message.get("io"):  # the command is about to write or read: it cannot be rerun
            used_streams = True
        elif "exit" in message:
            return int(message["exit"])


def _lost(paths: ServePaths) -> int:
    """Say that the server died during the command, whose output may be partial."""
    sys.stderr.flush()
    os.write(
        2,
        (
            "engram: the warm server stopped during this command, so its output may be "
            f"incomplete (server log: {paths.log}); run the command again\n"
        ).encode(),
    )
    return EXIT_SERVER_LOST


def _prog_name() -> str:
    """Return the program name Click would show in usage lines for this process."""
    main = sys.modules.get("__main__")
    package = getattr(main, "__package__", None)
    if package:
        return f"python -m {package.removesuffix('.__main__')}"
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "engram"


def _stream_settings(stream: object) -> dict[str, object]:
    """Return how Python set up this standard stream, for the server to do the same."""
    return {
        "encoding": getattr(stream, "encoding", None) or "utf-8",
        "errors": getattr(stream, "errors", None) or "strict",
        "line_buffering": bool(getattr(stream, "line_buffering", False)),
    }


def start_server(paths: ServePaths) -> None:
    """Start a server in the background once this process has done its command.

    Started at exit, so that its start-up (importing everything, 2-3 s of CPU) does not
    compete with the command this process runs itself. Two clients starting one at once is
    harmless: the second server finds the lock held and exits.
    """
    import atexit

    atexit.register(_spawn, paths)


def _spawn(paths: ServePaths) -> None:
    """Start ``engram serve`` detached (its own session, output to its log); do not wait."""
    import subprocess

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # the command's output goes out before anything else happens
        except (OSError, ValueError):
            pass
    try:
        check_folders(paths, create=True)
        log = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return  # a read-only or unsafe ENGRAM_HOME: no warm server, commands run here
    try:
        subprocess.Popen(
            server_argv(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass  # no server this time; the command itself ran as always
    finally:
        os.close(log)
