"""Project trust: what a repository ships is a proposal until the user trusts that exact content.

A project may ship files that would change what engram does: ``.engram/settings.toml`` (commands
that run without asking, verify commands, MCP tools called without asking), ``.engram/mcp.json``
(servers engram would start or connect to) and rules files (ENGRAM.md, AGENTS.md, CLAUDE.md,
which would become system-prompt instructions). None of them takes effect until the user has
looked at them (``engram trust``); the digest of their content is then recorded under
``ENGRAM_HOME``, and any change to them makes the project untrusted again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.stores.files import write_atomically

SHIPPED_FILES = (
    ".engram/settings.toml",
    ".engram/mcp.json",
    "ENGRAM.md",
    ".engram/ENGRAM.md",
    "ENGRAM.local.md",
    ".engram/ENGRAM.local.md",
    "AGENTS.md",
    "CLAUDE.md",
)
"""Files of a project that take effect only in a trusted project, relative to its root."""
TRUST_FILE = "trusted-projects.json"
"""Under ``ENGRAM_HOME``: each trusted project's resolved path and the digest trusted."""
MAX_SHIPPED_BYTES = 1_000_000
"""A shipped file larger than this is read only this far (its digest still covers its size)."""

TrustStatus = Literal["nothing", "trusted", "untrusted", "changed"]
"""``nothing``: the project ships none of the files; ``changed``: trusted once, since edited."""


@dataclass(frozen=True)
class ShippedFile:
    """One file the project ships that trust would enable."""

    path: str
    """Relative to the project root, as written in ``SHIPPED_FILES``."""
    size: int
    content: bytes
    """The file's bytes (at most ``MAX_SHIPPED_BYTES``)."""


def _read_shipped(root: Path, relative: str) -> ShippedFile | None:
    """Read one shipped file without following a link out of the project; None when absent."""
    path = root / relative
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:  # a link, a FIFO that refuses, an unreadable file: nothing to trust here
        return ShippedFile(relative, -1, b"")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return ShippedFile(relative, -1, b"")
        return ShippedFile(relative, info.st_size, handle.read(MAX_SHIPPED_BYTES))


def shipped_files(project: Path) -> list[ShippedFile]:
    """Return the files in ``SHIPPED_FILES`` that the project has, in that order."""
    root = project.resolve()
    found = [_read_shipped(root, relative) for relative in SHIPPED_FILES]
    return [item for item in found if item is not None]


def digest_of(files: list[ShippedFile]) -> str:
    """Return one digest over the shipped files' names, sizes and contents."""
    digest = hashlib.sha256()
    for item in files:
        digest.update(f"{item.path}\0{item.size}\0".encode())
        digest.update(hashlib.sha256(item.content).digest())
    return digest.hexdigest()


def _records(home: Path) -> dict[str, str]:
    try:
        data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return {}
    return {str(k): str(v) for k, v in projects.items() if isinstance(v, str)}


def _write_records(home: Path, records: dict[str, str]) -> None:
    text = json.dumps({"projects": dict(sorted(records.items()))}, indent=2) + "\n"
    write_atomically(home / TRUST_FILE, text.encode("utf-8"), mode=0o600)


def trust_status(project: Path, home: Path) -> TrustStatus:
    """Say whether the project's shipped files are trusted as they are now."""
    files = shipped_files(project)
    if not files:
        return "nothing"
    recorded = _records(home).get(str(project.resolve()))
    if recorded is None:
        return "untrusted"
    return "trusted" if recorded == digest_of(files) else "changed"


def record_trust(project: Path, home: Path, files: list[ShippedFile]) -> str:
    """Trust exactly ``files`` (what the user was shown) for ``project``; return the digest."""
    records = _records(home)
    digest = digest_of(files)
    records[str(project.resolve())] = digest
    _write_records(home, records)
    return digest


def forget_trust(project: Path, home: Path) -> bool:
    """Make the project untrusted again; return whether it was trusted."""
    records = _records(home)
    if records.pop(str(project.resolve()), None) is None:
        return False
    _write_records(home, records)
    return True
