"""The warm server: one process per ENGRAM_HOME that runs forwarded commands with its indexes open.

Concurrency: commands run one at a time, on the main thread, in arrival order. A command takes
over process-wide state (file descriptors 0-2, ``os.environ``, the working folder, the Rich
consoles; ``engram.cli._serve_request``), so two at once in one process would mix their
output. Forking a child per command would isolate them, but the process holds threads (the
file watchers, Chroma's) and open SQLite and Chroma handles, which a fork copies in
whatever state another thread left them; and a child's loaded tables would die with it. A
queued command waits for the one before (a few hundred milliseconds on a warm index) instead.
One thread per connection reads the request, checks it and queues it, so ``--status`` and
``--stop`` answer at once, and a client's Ctrl-C interrupts its own command (only): it becomes
a SIGINT sent to the main thread, so that a command blocked in a system call (a read, a
``time.sleep``, waiting for a child) is woken as the client's own process would be. A client's
SIGINT that arrives after its command ended is dropped; any other (the server's own Ctrl-C)
stops the server.

Peers are checked by their credentials (``SO_PEERCRED``): another user's connection is closed
unanswered. The server exits after ``idle_s`` seconds without a command, when asked to stop,
when a client of another code version asks (it is outdated), or when its folder is removed.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from types import FrameType
from typing import Any

from engram.cli._forwarded import is_forwarded
from engram.cli._serve_memory import release_free_memory, resident_mb
from engram.cli._serve_paths import ServePaths, check_folders, check_socket_file
from engram.cli._serve_projects import WarmProjects
from engram.cli._serve_request import AppCommand, run_command
from engram.cli._serve_wire import WireError, receive_message, send_message
from engram.graph._warm_resources import WARM_RESOURCES

log = logging.getLogger("engram.serve")

DEFAULT_IDLE_S = 900.0
"""Seconds without a command after which the server stops (``ENGRAM_SERVE_IDLE``)."""
TICK_S = 1.0
"""How often the main thread looks at the clock and at its folder between commands."""
PEER_CREDENTIALS = struct.Struct("3i")
EXIT_INTERRUPTED = 130
BACKLOG = 64
FDS_TIMEOUT_S = 5.0
"""How long a client that was told its command runs next may take to send its descriptors."""
STANDARD_FDS = (0, 1, 2)


class AlreadyServingError(RuntimeError):
    """Another server holds this ENGRAM_HOME's lock."""


@dataclass
class Job:
    """A queued command and its connection."""

    conn: socket.socket
    request: dict[str, Any]
    fds: list[int] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)
    """Set when the descriptors came (or the client left)."""
    state: str = "queued"
    """queued, running, interrupted, or done."""
    lock: threading.Lock = field(default_factory=threading.Lock)


class WarmServer:
    """Accepts connections on ``paths.socket`` and runs their commands on the main thread."""

    def __init__(
        self,
        paths: ServePaths,
        prepare: Callable[[], AppCommand],
        version: str,
        idle_s: float,
    ):
        self.paths = paths
        self.prepare = prepare
        """Imports what commands need and returns the app; called once the socket listens."""
        self.command: AppCommand | None = None
        self.version = version
        self.idle_s = idle_s
        self.projects = WarmProjects()
        self.started = time.time()
        self.served = 0
        self._jobs: queue.Queue[Job] = queue.Queue()
        self._stopping = threading.Event()
        self._last = time.monotonic()
        self._running = False
        """True while a command runs on the main thread (read by its SIGINT handler)."""
        self._client_interrupt = threading.Event()
        """Set when a client's Ctrl-C was sent to the main thread as a SIGINT."""

    def serve(self) -> None:
        """Serve until idle, stopped, outdated or orphaned.

        Raises:
            AlreadyServingError: Another server runs for this ENGRAM_HOME.
            UnsafeSocketError: The socket's folder or a file in its place is unsafe.
        """
        with self._lock(), self._listening() as listener, self._interrupts():
            threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
            # Listening first: a command arriving while the modules load waits for them
            # instead of running cold beside them (two cold starts on the same cores).
            self.command = self.prepare()
            self._last = time.monotonic()
            token = WARM_RESOURCES.set(self.projects)
            try:
                self._run_jobs()
            finally:
                WARM_RESOURCES.reset(token)
                self.projects.close()

    @contextmanager
    def _lock(self) -> Iterator[None]:
        check_folders(self.paths, create=True)
        fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise AlreadyServingError(
                    f"a server already runs for {self.paths.folder}"
                ) from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield
        finally:
            os.close(fd)

    @contextmanager
    def _listening(self) -> Iterator[socket.socket]:
        path = self.paths.socket
        with suppress(FileNotFoundError):
            check_socket_file(path)  # never unlink something that is not our own socket
            path.unlink()  # we hold the lock: a socket left here is a dead server's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            listener.bind(os.fspath(path))
        finally:
            os.umask(old)
        listener.listen(BACKLOG)
        try:
            yield listener
        finally:
            listener.close()
            with suppress(OSError):
                path.unlink()  # ours: no other server binds while the lock is held

    @contextmanager
    def _interrupts(self) -> Iterator[None]:
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _on_sigint(self, _signum: int, _frame: FrameType | None) -> None:
        """Interrupt the running command, or stop the server; drop a client's late Ctrl-C."""
        if self._client_interrupt.is_set():
            self._client_interrupt.clear()
            if not self._running:
                return  # its command ended before the signal came
        raise KeyboardInterrupt

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._greet, args=(conn,), daemon=True).start()

    def _greet(self, conn: socket.socket) -> None:
        """Check the peer, read its request, answer or queue it, then relay its Ctrl-C."""
        _pid, uid, _gid = PEER_CREDENTIALS.unpack(
            conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
        )
        if uid != os.getuid():
            conn.close()
            return
        try:
            request, fds = receive_message(conn, with_fds=True)
        except (OSError, WireError):
            conn.close()
            return
        for fd in fds:  # descriptors come later, when the command is about to run
            os.close(fd)
        op = request.get("op")
        if op != "run":
            self._answer(conn, op)
            return
        if request.get("version") != self.version:
            self._refuse(conn, "version")
            self.stop()  # a client of newer (or other) code: make way for its server
            return
        argv = request.get("argv")
        if not (
            isinstance(argv, list) and all(isinstance(a, str) for a in argv) and is_forwarded(argv)
        ):
            self._refuse(conn, "command")  # only the read-only commands the client hands over
            return
        job = Job(conn, request)
        try:
            send_message(conn, {"accepted": True})
        except OSError:
            self._close(job)
            return
        self._jobs.put(job)
        self._relay(job)

    def _answer(self, conn: socket.socket, op: object) -> None:
        with conn, suppress(OSError):
            if op == "status":
                send_message(conn, self.status())
            elif op == "stop":
                self.stop()
                send_message(conn, {"stopping": True, "pid": os.getpid()})
            else:
                send_message(conn, {"refused": "request"})

    def _refuse(self, conn: socket.socket, reason: str) -> None:
        with conn, suppress(OSError):
            send_message(conn, {"refused": reason, "version": self.version})

    def _relay(self, job: Job) -> None:
        """Read the rest of the client's messages: its descriptors, then any Ctrl-C.

        A client's Ctrl-C (or its disappearance) becomes a KeyboardInterrupt in its command,
        or drops the command if it has not started.
        """
        while True:
            try:
                message, fds = receive_message(job.conn, with_fds=True)
            except (OSError, WireError):
                message, fds = {}, []  # the client is gone: nobody waits for this command
            if message.get("streams") and len(fds) == len(STANDARD_FDS):
                job.fds = fds
                job.ready.set()
                continue
            for fd in fds:
                os.close(fd)
            with job.lock:
                if job.state == "running":
                    job.state = "interrupted"
                    self._client_interrupt.set()
                    main = threading.main_thread().ident
                    if main is not None:
                        signal.pthread_kill(main, signal.SIGINT)
                elif job.state == "queued":
                    job.state = "interrupted"
                job.ready.set()
                if job.state in {"done", "interrupted"}:
                    return

    def _run_jobs(self) -> None:
        while not self._stopping.is_set():
            try:
                job = self._jobs.get(timeout=TICK_S)
            except queue.Empty:
                if self._should_stop():
                    return
                continue
            self._run(job)
            self._last = time.monotonic()
            if self._jobs.empty():  # between commands: the client has its answer already
                release_free_memory()

    def _run(self, job: Job) -> None:
        """Ask for the client's descriptors, run its command with them, send the exit code.

        The descriptors are sent only now: descriptors in flight in a socket nobody reads
        would keep the client's pipes open after it gave up on a hung server.
        """
        code = EXIT_INTERRUPTED
        try:
            if job.state != "queued":
                return
            send_message(job.conn, {"ready": True})
            job.ready.wait(FDS_TIMEOUT_S)
            with job.lock:
                if job.state != "queued" or not job.fds:
                    return
                job.state = "running"
            self.projects.forget_missing()
            send_message(job.conn, {"started": True})
            if self.command is None:
                raise AssertionError("a command ran before the server was prepared")
            self._running = True
            try:
                code = run_command(self.command, job.request, job.fds, partial(_tell, job))
            finally:
                self._running = False
            self.served += 1
        except KeyboardInterrupt:
            code = EXIT_INTERRUPTED
        except OSError as exc:
            log.warning("engram serve: a client left: %s", exc)
        finally:
            with job.lock:
                job.state = "done"
            with suppress(OSError):
                send_message(job.conn, {"exit": code})
            self._close(job)

    def _close(self, job: Job) -> None:
        for fd in job.fds:
            with suppress(OSError):
                os.close(fd)
        job.fds = []
        with suppress(OSError):
            job.conn.close()

    def _should_stop(self) -> bool:
        if time.monotonic() - self._last >= self.idle_s:
            log.warning("engram serve: idle for %.0f s, stopping", self.idle_s)
            return True
        if not self.paths.socket.exists() or not self.paths.folder.is_dir():
            log.warning("engram serve: its socket or folder was removed, stopping")
            return True
        return False

    def stop(self) -> None:
        """Stop after the command running now (from any thread)."""
        self._stopping.set()

    def status(self) -> dict[str, Any]:
        """Return what ``engram serve --status`` shows."""
        return {
            "running": True,
            "pid": os.getpid(),
            "version": self.version,
            "socket": os.fspath(self.paths.socket),
            "log": os.fspath(self.paths.log),
            "uptime_s": round(time.time() - self.started, 1),
            "idle_s": round(time.monotonic() - self._last, 1),
            "idle_limit_s": self.idle_s,
            "commands": self.served,
            "index_updates": self.projects.updates,
            "projects": self.projects.projects(),
            "rss_mb": resident_mb(),
        }


def _tell(job: Job) -> None:
    """Tell the client its command is about to use its streams (it can no longer run it again)."""
    with suppress(OSError):  # gone: the command's own read or write fails next
        send_message(job.conn, {"io": True})
