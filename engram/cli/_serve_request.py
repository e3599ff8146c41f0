"""Run one forwarded command in the server as if it were the client's own process.

For the length of the command the server takes on the client's process-wide state: its
standard input, output and error (the descriptors it passed, put on 0, 1 and 2, so terminal
checks, terminal sizes and child processes see the client's), its environment (``COLUMNS``,
``NO_COLOR``, ``TERM``, ``ENGRAM_*``...), its working folder, ``sys.argv`` and the way its Python
set up ``sys.stdout`` and ``sys.stderr``; the Rich consoles are set up again from them. All of
it is put back afterwards. This is why the server runs one command at a time.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, Protocol

from engram.cli._command_support import reset_consoles

STANDARD_FDS = (0, 1, 2)


class AppCommand(Protocol):
    """The app as one Click command (``typer.main.get_command``)."""

    def main(
        self, args: Sequence[str] | None = ..., prog_name: str | None = ..., **extra: Any
    ) -> Any:
        """Parse ``args`` and run the command they name (exits as a process would)."""
        ...


def run_command(
    command: AppCommand,
    request: dict[str, Any],
    fds: list[int],
    on_first_io: Callable[[], None] = lambda: None,
) -> int:
    """Run ``request`` (a ``run`` message) with the client's ``fds``; return its exit code.

    ``on_first_io`` is called once, before the command first writes to the client's output or
    error or reads its input: until then a command that dies has had no effect the client
    could see, and the client can run it again itself.
    """
    with _client_process(request, fds, _once(on_first_io)):
        try:
            command.main(
                args=list(request["argv"]),
                prog_name=str(request.get("prog_name") or "engram"),
                standalone_mode=True,
            )
        except SystemExit as done:
            return _exit_code(done.code)
        except Exception:  # what the process would have printed before dying
            traceback.print_exc()
            return 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    return 0


def _exit_code(code: object) -> int:
    """Return the process exit status ``sys.exit(code)`` gives."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _once(call: Callable[[], None]) -> Callable[[], None]:
    done = False

    def first() -> None:
        nonlocal done
        if not done:
            done = True
            call()

    return first


class _ClientFile(io.FileIO):
    """The client's descriptor, announcing the command's first read or write of it."""

    def __init__(self, fd: int, mode: str, announce: Callable[[], None]) -> None:
        super().__init__(fd, mode, closefd=False)
        self._announce = announce

    def write(self, data: Any, /) -> int:
        """Announce, then write (the client knows output began before any byte reaches it)."""
        self._announce()
        return super().write(data)

    def readinto(self, buffer: Any, /) -> int | None:
        """Announce, then read (input taken cannot be given to a second run)."""
        self._announce()
        return super().readinto(buffer)

    def read(self, size: int | None = -1, /) -> bytes:
        """Announce, then read."""
        self._announce()
        return super().read(size)

    def readall(self) -> bytes:
        """Announce, then read to the end."""
        self._announce()
        return super().readall()


@contextmanager
def _client_process(
    request: dict[str, Any], fds: list[int], announce: Callable[[], None]
) -> Iterator[None]:
    """Take on the client's streams, environment, folder and argv; restore them after."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_fds = [os.dup(fd) for fd in STANDARD_FDS]
    client_streams: tuple[io.TextIOWrapper, ...] = ()
    try:
        for target, fd in zip(STANDARD_FDS, fds, strict=True):
            os.dup2(fd, target)
        _set_environ(request["env"])
        os.chdir(request["cwd"])
        sys.argv = ["engram", *request["argv"]]
        out, err = request["streams"]
        sys.stdin = io.TextIOWrapper(
            io.BufferedReader(_ClientFile(0, "r", announce)),
            encoding=out["encoding"],
            errors=out["errors"],
        )
        client_streams = (_writer(1, out, announce), _writer(2, err, announce))
        sys.stdout, sys.stderr = client_streams
        _point_log_handlers(saved_streams[2], sys.stderr)
        reset_consoles()
        yield
    finally:
        for stream in {sys.stderr, *client_streams[1:]}:  # other threads log on meanwhile
            _point_log_handlers(stream, saved_streams[2])
        try:  # the streams as the command left them, then the ones made for it here
            _flush_or_drop((sys.stdout, sys.stderr), client_streams)
        finally:  # even when a Ctrl-C lands in that flush: the next command gets clean state
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for target, fd in zip(STANDARD_FDS, saved_fds, strict=True):
                os.dup2(fd, target)
                os.close(fd)
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            _set_environ(saved_env)
            reset_consoles()


def _flush_or_drop(streams: Sequence[Any], owned: Sequence[io.TextIOWrapper]) -> None:
    """Flush the command's streams; make the ``owned`` writers drop what they still hold.

    A writer's buffer that could not be written (the client's pipe closed, or a Ctrl-C
    landed in the flush) must never be written later: a writer is flushed again when it is
    collected, by then onto descriptors 1 and 2 of the server or of the next client.
    Closing the raw file under the writers made for this command (their descriptors stay
    open: ``closefd`` is False) makes them drop the rest instead.
    """
    try:
        for stream in streams:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # the client's pipe is closed: what is lost was never going to arrive
    finally:
        for writer in owned:
            buffered = writer.buffer
            if isinstance(buffered, io.BufferedWriter):
                buffered.raw.close()


def _writer(fd: int, settings: dict[str, Any], announce: Callable[[], None]) -> io.TextIOWrapper:
    """Return a text stream on ``fd`` set up as the client's Python set up its own."""
    raw = _ClientFile(fd, "w", announce)
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=settings["encoding"],
        errors=settings["errors"],
        line_buffering=bool(settings["line_buffering"]),
    )


def _point_log_handlers(old: Any, new: Any) -> None:
    """Move the root logger's handlers writing to ``old`` (the stderr) to ``new``.

    Without flushing ``old`` as ``setStream`` would: it was flushed already, and a client's
    stream may be closed by now.
    """
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is old:
            with handler.lock or nullcontext():
                handler.stream = new


def _set_environ(values: dict[str, str]) -> None:
    """Make ``os.environ`` exactly ``values`` (and the time zone follow ``TZ``)."""
    for name in list(os.environ):
        if name not in values:
            del os.environ[name]
    os.environ.update(values)
    time.tzset()
