"""Replace a file's content in one step, and bound how long a file operation may take.

A reader or a crash sees the old file or the new one; a file operation on a project's files
(a hung network mount, a FIFO swapped in) never holds a write tool or a rewind forever.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FILE_OP_SECONDS = 30.0
"""The longest one file operation of the write tools or a rewind may take."""


class FileTimeoutError(OSError):
    """A file operation did not finish within its time limit."""


def within_time_limit(what: str, operation: Callable[[], T], seconds: float | None = None) -> T:
    """Run ``operation`` and return its result, or give up after ``seconds``.

    The operation runs in a daemon thread: a system call that never returns (a hung mount)
    cannot be cancelled, but the caller is free again and is told what hung.

    Raises:
        FileTimeoutError: The operation was still running after ``seconds``
            (default :data:`FILE_OP_SECONDS`).
        BaseException: Whatever ``operation`` raised.
    """
    limit = FILE_OP_SECONDS if seconds is None else seconds
    result: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(operation())
        except BaseException as exc:  # handed to the caller's thread below
            failure.append(exc)

    worker = threading.Thread(target=work, name="engram-file-op", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise FileTimeoutError(
            errno.ETIMEDOUT, f"{what} did not finish within {limit:g} s (is the file system hung?)"
        )
    if failure:
        raise failure[0]
    return result[0]


def write_atomically(
    path: Path, data: bytes, *, mode: int | None = None, temp_dir: Path | None = None
) -> None:
    """Write ``data`` to a temp file, flush it to disk, rename it into place.

    Args:
        path: The file to create or replace (its folder is created when missing).
        data: The new content.
        mode: Permission bits of the new file; None keeps those of the file being replaced
            (or the temp file's default for a new one).
        temp_dir: Where the temp file is made; it must be on ``path``'s file system. None:
            beside ``path`` (where a ``kill -9`` mid-write leaves it for anyone to see).

    Raises:
        OSError: The folder is not writable or the disk is full; ``path`` is left untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None and path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=temp_dir or path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
