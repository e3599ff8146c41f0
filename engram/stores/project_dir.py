"""The project's ``.engram/`` folder: created private and ignored by the project's git."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENGRAM_DIR", "GITIGNORE_TEXT", "make_private_dir"]

ENGRAM_DIR = ".engram"
GITIGNORE_TEXT = (
    "# engram's local data (index, session ledgers, spilled tool outputs): never committed.\n"
    "# The team files beside it (ENGRAM.md, ignore) may be.\n"
    "*\n"
    "!ENGRAM.md\n"
    "!ignore\n"
)
"""Written as ``.engram/.gitignore`` so ``git add -A`` never picks up transcripts or indexes."""
PRIVATE_DIR_MODE = 0o700


def make_private_dir(folder: Path) -> Path:
    """Create ``folder`` (owner-only when new) and git-ignore the ``.engram`` folder it is in.

    Any ``.engram`` folder on the way that has no ``.gitignore`` gets one; an existing
    ``.gitignore`` is never rewritten.

    Returns:
        ``folder``.
    """
    for candidate in (folder, *folder.parents):
        if candidate.name == ENGRAM_DIR:
            # Made first: ``mkdir(parents=True)`` gives only the last folder ``mode``.
            candidate.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
            _write_gitignore(candidate)
            break
    folder.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    return folder


def _write_gitignore(engram_dir: Path) -> None:
    target = engram_dir / ".gitignore"
    if target.exists():
        return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:  # another process wrote it first
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(GITIGNORE_TEXT)
