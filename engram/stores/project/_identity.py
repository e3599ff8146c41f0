"""A project's identity across clones: its git history, not the folder it was cloned into.

Two clones of one repository, at any paths, on any branches, are one project: the identity is
the root commit reached from ``HEAD`` along first parents (merging in another history does not
change it), plus the folder's place in the repository when engram opens a sub-folder. The root
commit object is read and its hash checked, so a repository can claim another project's
identity only by holding that commit, that is by having its history; a folder without git, a
shallow clone (whose oldest commit is wherever the clone was cut) or a repository git refuses
is identified by its path.

What the identity shares is decided by the user, never by the repository:

- **vectors** of the shared code index are keyed by it (they are computed by engram's own
  embedder from the text, so a checkout cannot plant a wrong one);
- **memory** (project facts, experience, pack feedback) and session listing use it only for a
  checkout the user has *joined* to its project (``engram trust``): anyone can clone a fork of
  a public project and hold its history, so until then a checkout keeps its memory to itself,
  keyed by its path, and neither reads nor writes the project's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from engram.stores.files import git_environment, write_atomically
from engram.stores.project._key import project_key

HISTORY_PREFIX = "git:"
"""How an identity taken from history starts (a path identity is the absolute path)."""
JOIN_FILE = "joined-projects.json"
"""Under ``ENGRAM_HOME``: each joined checkout's resolved path and the identity it joined."""
GIT_TIMEOUT_S = 20.0
"""Longest a git call may take; a history that needs longer is identified by its path."""
_PLUMBING = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
_SHA = re.compile(rb"^([0-9a-f]{40}|[0-9a-f]{64})$")

IdentitySource = Literal["history", "path"]


@dataclass(frozen=True)
class ProjectIdentity:
    """Who a project is, for what its checkouts share."""

    key: str
    """``git:<root commit>[/<folder in the repository>]``, or the project's path."""
    source: IdentitySource
    note: str = ""
    """Why the path stands in for the history ("" when it does not)."""

    @property
    def shared(self) -> bool:
        """Whether other checkouts of the project get the same identity."""
        return self.source == "history"


def project_identity(project: Path) -> ProjectIdentity:
    """Return the identity of the project at ``project`` (its history, else its path)."""
    root = Path(project).expanduser().resolve()
    return _identity_at(str(root), _head_marker(root))


def memory_key(project: Path, home: Path) -> str:
    """Return the key the project's memory and sessions are kept under.

    The project's identity when the user joined this checkout to it (``join_project``) and
    the checkout still has that identity; otherwise the checkout's own path key.
    """
    path = project_key(project)
    joined = _joins(Path(home)).get(path)
    if not joined:
        return path
    identity = project_identity(project)
    return identity.key if identity.shared and identity.key == joined else path


def join_project(project: Path, home: Path) -> ProjectIdentity:
    """Join this checkout to its project's shared memory; return the identity joined.

    A project identified by its path has nothing to join; it is returned unchanged.
    """
    identity = project_identity(project)
    if identity.shared:
        joins = _joins(Path(home))
        joins[project_key(project)] = identity.key
        _write_joins(Path(home), joins)
    return identity


def leave_project(project: Path, home: Path) -> bool:
    """Keep this checkout's memory to itself again; return whether it had joined."""
    joins = _joins(Path(home))
    if joins.pop(project_key(project), None) is None:
        return False
    _write_joins(Path(home), joins)
    return True


def joined_identity(project: Path, home: Path) -> str:
    """Return the identity this checkout joined ("" when it did not)."""
    return _joins(Path(home)).get(project_key(project), "")


JOIN_NOTED = "join-noted"
"""In the project's state folder: the note about joining was given for this checkout."""


def join_note(project: Path, home: Path, state_folder: Path) -> str:
    """Say once that a shared store keeps this checkout's memory to itself until it joins.

    For a team on a shared database: a clone with history that the user has not joined gets
    one note, then never again ("" when there is nothing to say or it was said).
    """
    marker = state_folder / JOIN_NOTED
    if os.path.lexists(marker) or joined_identity(project, home):
        return ""
    identity = project_identity(project)
    if not identity.shared:
        return ""
    try:
        marker.touch()
    except OSError:
        return ""  # said again next time rather than never
    return (
        "the team database keeps this checkout's memory and sessions to itself: "
        "`engram project join` shares them with the project's other checkouts "
        "(join only a repository you trust)"
    )


def _joins(home: Path) -> dict[str, str]:
    try:
        data = json.loads((home / JOIN_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {str(k): v for k, v in projects.items() if isinstance(v, str) and v}


def _write_joins(home: Path, joins: dict[str, str]) -> None:
    text = json.dumps({"projects": dict(sorted(joins.items()))}, indent=2) + "\n"
    write_atomically(home / JOIN_FILE, text.encode("utf-8"), mode=0o600)


def _git(root: Path, *args: str, data: bytes | None = None) -> bytes | None:
    """Run one read-only git call in ``root``; None when git fails, is missing or too slow."""
    try:
        done = subprocess.run(
            ["git", *_PLUMBING, *args],
            cwd=root,
            input=data,
            capture_output=True,
            env=git_environment({"GIT_NO_REPLACE_OBJECTS": "1", "GIT_CONFIG_NOSYSTEM": "1"}),
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _head_marker(root: Path) -> str:
    """Return what the identity of ``root`` depends on: HEAD's commit and the folder's place.

    One cheap git call; the identity itself (a walk of the history) is cached per marker.
    """
    out = _git(root, "rev-parse", "--is-shallow-repository", "--show-prefix", "HEAD")
    if out is None:
        return ""
    return out.decode("utf-8", "replace")


@lru_cache(maxsize=64)
def _identity_at(root: str, marker: str) -> ProjectIdentity:
    path = project_key(root)
    lines = marker.split("\n")
    if not marker or len(lines) < 3:
        return ProjectIdentity(path, "path", "not a git repository with a commit")
    shallow, prefix = lines[0].strip(), lines[1].strip().strip("/")
    if shallow == "true":
        return ProjectIdentity(
            path, "path", "a shallow clone (`git fetch --unshallow` lets it share the project's)"
        )
    found = _git(Path(root), "rev-list", "--first-parent", "--max-parents=0", "HEAD")
    roots = found.split() if found else []
    if not roots or not _SHA.match(roots[-1]):
        return ProjectIdentity(path, "path", "git could not read the history")
    first = roots[-1]
    if not _commit_is_genuine(Path(root), first):
        return ProjectIdentity(path, "path", "the root commit does not match its hash")
    key = HISTORY_PREFIX + first.decode("ascii") + (f"/{prefix}" if prefix else "")
    return ProjectIdentity(key, "history")


def _commit_is_genuine(root: Path, sha: bytes) -> bool:
    """Tell whether the object named ``sha`` is a commit whose content hashes to ``sha``.

    git does not check a loose object's hash when reading it, so a planted object under a
    known commit's name would otherwise pass for that commit.
    """
    body = _git(root, "cat-file", "commit", sha.decode("ascii"))
    if body is None:
        return False
    header = f"commit {len(body)}\0".encode("ascii")
    digest = hashlib.sha1 if len(sha) == 40 else hashlib.sha256
    return digest(header + body).hexdigest().encode("ascii") == sha
