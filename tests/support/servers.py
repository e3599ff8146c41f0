"""Start and stop real local servers for integration tests (free ports, process groups)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

LANGGRAPH = Path(sys.executable).parent / "langgraph"
START_TIMEOUT_S = 240
STOP_TIMEOUT_S = 30
TAKEN_PORT = 2024
"""The default ``langgraph dev`` port, taken on these machines."""


def free_port() -> int:
    """Return a free port on 127.0.0.1 (never the default langgraph port)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port != TAKEN_PORT:
            return port


def tail(path: Path, lines: int = 60) -> str:
    """Return the last lines of a log file (empty when it does not exist)."""
    if not path.exists():
        return ""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server's whole process group: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(STOP_TIMEOUT_S)


def wait_until_ready(
    probe: Callable[[], object],
    proc: subprocess.Popen[bytes],
    what: str,
    errors: tuple[type[BaseException], ...] = (OSError,),
    timeout_s: float = START_TIMEOUT_S,
) -> None:
    """Call ``probe`` until it stops raising ``errors``; fail if the server dies or stalls."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            probe()
            return
        except errors:
            if proc.poll() is not None:
                pytest.fail(f"{what} exited with {proc.returncode}")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not start within {timeout_s:.0f}s")
            time.sleep(0.3)


def langgraph_dev_command(port: int) -> list[str]:
    """Return the README's ``langgraph dev --port PORT --no-browser``, plus ``--no-reload``.

    No ``--allow-blocking``: the server's blocking-call detector stays on. ``--no-reload``
    keeps a test server from restarting mid-run.
    """
    return [str(LANGGRAPH), "dev", "--port", str(port), "--no-browser", "--no-reload"]


@contextmanager
def langgraph_dev(workdir: Path, log: Path, env: Mapping[str, str]) -> Iterator[str]:
    """Run ``langgraph dev`` in ``workdir`` (beside its ``langgraph.json``); yield its URL."""
    port = free_port()
    command = langgraph_dev_command(port)
    full_env = {
        **os.environ,
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, log)
        yield url
    finally:
        stop_group(proc)


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer /ok within {START_TIMEOUT_S}s:\n{tail(log)}")
