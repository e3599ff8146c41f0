"""Replace a file's content in one step: a reader or a crash sees the old file or the new one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


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
