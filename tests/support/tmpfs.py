"""A small tmpfs mounted for one test: a read-only home, a full disk (root or CAP_SYS_ADMIN only).

``mounted`` yields the folder, or raises ``MountRefusedError`` when this machine does not allow
mounting, so tests can skip with the reason and the suite passes anywhere.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["MountRefusedError", "mounted", "remount_read_only"]


class MountRefusedError(RuntimeError):
    """This process may not mount a file system (not root, no CAP_SYS_ADMIN, no mount tool)."""


def _mount(*args: str) -> None:
    try:
        done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        raise MountRefusedError(f"cannot run mount: {exc}") from exc
    if done.returncode != 0:
        raise MountRefusedError(f"mount {' '.join(args)} refused: {done.stderr.strip()}")


@contextmanager
def mounted(folder: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``2m``, ``64k``) on ``folder`` and unmount it afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


def remount_read_only(folder: Path) -> None:
    """Make the tmpfs on ``folder`` read-only (even for root)."""
    _mount("-o", "remount,ro", str(folder))
