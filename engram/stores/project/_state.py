"""engram's own state of a project, kept under ``ENGRAM_HOME/projects/<key>/``, never in the tree.

Everything engram later reads back as its own — the code index and graph, snapshots and their
log, write journals and temp files, ledgers, spilled tool outputs, locks — lives here, outside
the folder a cloned repository controls. The key is the project's resolved path (its base name
for people, a digest for uniqueness). Folders are created owner-only, and a link anywhere on
the way (from ``ENGRAM_HOME`` down) is refused rather than followed.

State an older engram left in ``<project>/.engram/`` is never read; ``legacy_state`` names it
so the user can delete it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from engram.stores._errors import StoreError
from engram.stores.project._key import project_key

PROJECTS_FOLDER = "projects"
"""Under ``ENGRAM_HOME``: one folder of state per project."""
LEGACY_STATE = ("index", "ledger", "snapshots", "tool-outputs", "tmp")
"""What older versions kept in ``<project>/.engram/`` (never read now)."""
LEGACY_NOTED = "legacy-state-noted"
"""In the state folder: the legacy-state note was given for this project."""
PRIVATE_MODE = 0o700
_DIGEST_CHARS = 16
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class StateLinkError(StoreError, PermissionError):
    """A folder of engram's state is a link (or not a folder): refused, never followed."""


def project_state_dir(project: Path, home: Path) -> Path:
    """Return the folder of engram's state for ``project`` (not created here)."""
    key = project_key(project)
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]
    name = _NAME_UNSAFE.sub("_", Path(key).name).strip("_")[:40] or "root"
    return Path(home).expanduser().absolute() / PROJECTS_FOLDER / f"{name}-{digest}"


def private_dir(folder: Path, base: Path) -> Path:
    """Create ``folder`` (below ``base``) owner-only, refusing a link or a file on the way.

    ``base`` (``ENGRAM_HOME``) is created if missing; every part below it must be a real folder
    (checked with ``lstat``, one part at a time) or is made with mode 0700, so a link planted
    anywhere under ``base`` cannot redirect engram's writes.

    Returns:
        ``folder``.

    Raises:
        StateLinkError: A part below ``base`` is a link or a file.
        ValueError: ``folder`` is not below ``base``.
    """
    base = Path(base).absolute()
    folder = Path(folder).absolute()
    parts = folder.relative_to(base).parts
    base.mkdir(mode=PRIVATE_MODE, parents=True, exist_ok=True)
    current = base
    for part in parts:
        current = current / part
        try:
            os.mkdir(current, PRIVATE_MODE)
        except FileExistsError:
            info = os.lstat(current)
            if not stat.S_ISDIR(info.st_mode):
                what = "a link" if stat.S_ISLNK(info.st_mode) else "not a folder"
                raise StateLinkError(
                    f"{current} is {what}; engram keeps its state only in real folders",
                    hint=f"remove {current} (engram recreates it)",
                ) from None
    return folder


def legacy_state(project: Path) -> list[Path]:
    """Return the folders an older engram left in ``<project>/.engram/`` (safe to delete)."""
    base = Path(project) / ".engram"
    return [base / name for name in LEGACY_STATE if os.path.lexists(base / name)]


@dataclass(frozen=True)
class ProjectState:
    """Where engram keeps its own state of one project: a folder under ``ENGRAM_HOME``."""

    project: Path
    """The project root (resolved)."""
    home: Path
    """``ENGRAM_HOME``: nothing below it is reached through a link."""

    @property
    def folder(self) -> Path:
        """The project's state folder (``ENGRAM_HOME/projects/<key>``)."""
        return project_state_dir(self.project, self.home)

    def path(self, *parts: str) -> Path:
        """Return a path inside the state folder (nothing is created)."""
        return self.folder.joinpath(*parts)

    def make(self, *parts: str) -> Path:
        """Create (owner-only, no link followed) and return a folder inside the state folder."""
        return private_dir(self.path(*parts), self.home)

    def legacy_note(self) -> str:
        """Say once which folders an older engram left in the project ("" after that).

        They are never read; the note is recorded as said in the state folder.
        """
        found = legacy_state(self.project)
        marker = self.path(LEGACY_NOTED)
        if not found or os.path.lexists(marker):
            return ""
        try:
            self.make()
            marker.touch()
        except OSError:
            return ""  # said again next time rather than never
        names = " ".join(str(path) for path in found)
        return (
            f"engram now keeps its own state under {self.folder}; what an older version "
            f"left in the project is never read and can be deleted: rm -rf {names}"
        )
