"""A real PostgreSQL and a real Chroma server that a test can stop and start again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import free_port, stop_group, wait_until_ready

PG_BIN = Path(os.environ.get("ENGRAM_TEST_PG_BIN", "/usr/local/bin"))
CHROMA = Path(sys.executable).parent / "chroma"
START_TIMEOUT_S = 60
PASSWORD = "pg-Secret-9f2c"
"""Sent in the URL (the test server trusts every local user): it must never be printed."""


def _as_postgres(args: list[str]) -> list[str]:
    """Postgres refuses to run as root: drop to the ``postgres`` user when we are root."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def postgres_available() -> bool:
    """Return whether the PostgreSQL binaries (and a way to run them) are here."""
    return (PG_BIN / "initdb").exists() and (os.geteuid() != 0 or bool(shutil.which("runuser")))


class PostgresServer:
    """One initialised data folder; ``start`` and ``stop`` the server on it (``pg_ctl``)."""

    def __init__(self) -> None:
        # Not under pytest's tmp folder: the postgres user must be able to reach it.
        self.base = Path(tempfile.mkdtemp(prefix="engram-pg-"))
        self.data = self.base / "data"
        sockets = self.base / "sock"
        sockets.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres")
            shutil.chown(sockets, "postgres")
        subprocess.run(
            _as_postgres(
                [str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]
                + ["--no-sync"]
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        self.port = free_port()
        self.options = f"-p {self.port} -h 127.0.0.1 -k {sockets} -F"
        self.url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", *args]),
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT_S,
        )

    def running(self) -> bool:
        """Return whether the server is up (its pid file is there)."""
        return (self.data / "postmaster.pid").exists()

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        if not self.running():
            self._ctl("-o", self.options, "-l", str(self.base / "log"), "start")

    def stop(self) -> None:
        """Stop the server at once, dropping every connection (as a crash or a restart would)."""
        if self.running():
            self._ctl("-m", "immediate", "stop")

    def remove(self) -> None:
        """Stop the server and delete its files."""
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


class ChromaServer:
    """``chroma run`` on one data folder, stopped and started again by the test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server (if it is not running) and wait for its heartbeat."""
        if self.proc is not None and self.proc.poll() is None:
            return
        command = [str(CHROMA), "run", "--path", str(self.path), "--host", "127.0.0.1"]
        self.proc = subprocess.Popen(
            [*command, "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        proc = self.proc
        wait_until_ready(
            lambda: urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2).read(),
            proc,
            "the Chroma server",
            timeout_s=START_TIMEOUT_S,
        )

    def stop(self) -> None:
        """Stop the server (its data stays for the next ``start``)."""
        if self.proc is not None:
            stop_group(self.proc)
            self.proc = None


def skip_without_postgres() -> None:
    """Skip the test when the PostgreSQL binaries are not installed."""
    if not postgres_available():
        pytest.skip(f"PostgreSQL binaries not found in {PG_BIN}")
