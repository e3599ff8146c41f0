"""``engram serve``: run the warm server in the foreground, show its status, or stop it."""

from __future__ import annotations

import functools
import os
import sys
import time

import typer

from engram.cli._command_support import err_console, fail, out_console, print_json
from engram.cli._serve_client import connect
from engram.cli._serve_paths import UnsafeSocketError, check_socket_file, serve_paths
from engram.cli._serve_request import AppCommand
from engram.cli._serve_wire import WireError, receive_message, send_message

STOP_WAIT_S = 5.0
"""How long ``--stop`` waits for the server's socket to go."""


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to the root command."""
    app.command("serve")(serve_command)


def serve_command(
    ctx: typer.Context,
    status: bool = typer.Option(
        False, "--status", help="Say whether a server runs, and its state."
    ),
    stop: bool = typer.Option(False, "--stop", help="Stop the running server."),
    idle: float | None = typer.Option(
        None,
        "--idle",
        help="Stop after this many seconds without a command (default 900; ENGRAM_SERVE_IDLE).",
        min=1,
    ),
    as_json: bool = typer.Option(False, "--json", help="Print --status as JSON."),
) -> None:
    """Keep engram warm: commands like search and context are answered by this process."""
    if status and stop:
        fail("--status and --stop are two commands", "give one of them")
    if status:
        _show_status(as_json)
    elif stop:
        _stop()
    else:
        _serve(idle, ctx.find_root().command)


def _ask(op: str) -> dict | None:
    """Send ``op`` to the running server; None when none answers."""
    paths = serve_paths()
    try:
        check_socket_file(paths.socket)
    except FileNotFoundError:
        return None
    except UnsafeSocketError as exc:
        fail(f"refusing the server's socket: {exc}", f"remove {paths.socket} and start again")
    sock = connect(paths.socket)
    if sock is None:
        return None
    with sock:
        try:
            send_message(sock, {"op": op})
            return receive_message(sock)[0]
        except (OSError, WireError):
            return None


def _show_status(as_json: bool) -> None:
    paths = serve_paths()
    found = _ask("status") or {"running": False, "socket": os.fspath(paths.socket)}
    if as_json:
        print_json(found)
    elif not found["running"]:
        out_console.print(f"no engram server runs (socket: {found['socket']})")
    else:
        out_console.print(
            f"engram server {found['pid']} · {found['version']} · up {found['uptime_s']:.0f} s · "
            f"{found['commands']} commands · {found['rss_mb']:.0f} MB resident · "
            f"idle {found['idle_s']:.0f} of {found['idle_limit_s']:.0f} s"
        )
        out_console.print(f"socket: {found['socket']}")
        out_console.print(f"log: {found['log']}")
        for project in found["projects"]:
            out_console.print(f"project: {project}")


def _stop() -> None:
    answer = _ask("stop")
    if answer is None:
        out_console.print("no engram server runs")
        return
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline and serve_paths().socket.exists():
        time.sleep(0.05)
    out_console.print(f"stopped the engram server {answer.get('pid')}")


def _serve(idle: float | None, app: AppCommand) -> None:
    """Serve in the foreground; ``app`` is the root command that runs each request."""
    from engram.cli._serve_paths import code_version
    from engram.cli._serve_server import DEFAULT_IDLE_S, AlreadyServingError, WarmServer
    from engram.cli._serve_warmup import warm_up

    idle_s = idle if idle is not None else _idle_setting(DEFAULT_IDLE_S)
    # "" on sys.path is the current folder, which each request changes to the client's
    # project: a module the repository ships must never be imported in place of a real one.
    sys.path[:] = [entry for entry in sys.path if entry]
    paths = serve_paths()
    _own_log()
    server = WarmServer(paths, functools.partial(warm_up, app), code_version(), idle_s)
    err_console.print(f"engram serve: starting on {paths.socket} (pid {os.getpid()})")
    try:
        server.serve()
    except AlreadyServingError as exc:
        fail(str(exc), "`engram serve --status` shows it; `engram serve --stop` stops it", code=1)
    except OSError as exc:  # UnsafeSocketError among them
        fail(f"cannot listen on {paths.socket}: {exc}", "check ENGRAM_HOME's permissions", code=1)
    except KeyboardInterrupt:
        err_console.print("engram serve: stopped")


def _own_log() -> None:
    """Send the server's own messages to where it started (its log), never to a client.

    A command's stderr is the client's while it runs; the watchers' messages must not land
    in it.
    """
    import logging

    logger = logging.getLogger("engram.serve")
    logger.propagate = False
    logger.addHandler(logging.StreamHandler(os.fdopen(os.dup(2), "w", buffering=1)))


def _idle_setting(default: float) -> float:
    raw = os.environ.get("ENGRAM_SERVE_IDLE", "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        fail(f"ENGRAM_SERVE_IDLE={raw!r} is not a number of seconds", "e.g. ENGRAM_SERVE_IDLE=900")
    return value
