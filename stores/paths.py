"""Path rules shared by every reader of a project: confinement, secrets files, skipped folders."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path, PurePosixPath

from engram.stores.errors import StoreError

__all__ = [
    "SKIP_DIRS",
    "PathEscapeError",
    "confine",
    "is_secret_path",
    "is_skipped_dir",
    "relative_posix",
]

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".engram", ".venv", "venv", "env", ".env", "node_modules",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
        "build", "dist", "target", "out", ".gradle", ".idea", ".vscode", ".next",
        ".cache", "site-packages", ".eggs", "coverage", ".terraform",
    }
)
"""Folder names never walked: VCS internals, virtualenvs, dependencies, build output, caches."""

SECRET_PATTERNS = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "id_rsa", "id_rsa.*", "id_dsa", "id_dsa.*", "id_ecdsa", "id_ecdsa.*", "id_ed25519",
    "id_ed25519.*", ".netrc", ".pgpass", ".npmrc", ".pypirc", "credentials", "credentials.json",
    "secrets.json", "secrets.yaml", "secrets.yml", "*.kdbx", ".htpasswd",
)
"""File-name patterns of secrets files: never indexed, never returned to the model."""

MAX_PATH_CHARS = 4096


class PathEscapeError(StoreError, PermissionError):
    """A path resolves outside the project root or names a protected file."""


def is_secret_path(path: str | os.PathLike[str]) -> bool:
    """Return True when the file name looks like a secrets file (``.env``, keys, …)."""
    name = PurePosixPath(str(path).replace("\\", "/")).name.lower()
    if name in {".env.example", ".env.sample", ".env.template"}:
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_PATTERNS)


def is_skipped_dir(name: str) -> bool:
    """Return True for folder names that are never walked or searched."""
    return name in SKIP_DIRS or name.endswith(".egg-info")


def relative_posix(root: Path, path: Path) -> str:
    """Return ``path`` relative to ``root`` with forward slashes."""
    return path.relative_to(root).as_posix()


def confine(root: Path, raw: str) -> Path:
    """Resolve a user- or model-supplied path inside the project root.

    Args:
        root: The resolved project root.
        raw: A path relative to the root (absolute paths are accepted only when they
            point inside it).

    Returns:
        The resolved absolute path, guaranteed to lie inside ``root``.

    Raises:
        PathEscapeError: The path is empty, malformed, leaves the root (``..``, absolute,
            ``~``, symlinks), or points into ``.git/`` or at a secrets file.
    """
    if not raw or not raw.strip():
        raise PathEscapeError("empty path")
    if "\x00" in raw:
        raise PathEscapeError("path contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise PathEscapeError(f"path is longer than {MAX_PATH_CHARS} characters")
    if raw.startswith("~"):
        raise PathEscapeError(f"{raw!r} points outside the project (home directory)")
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops, names too long for the OS
        raise PathEscapeError(f"cannot resolve {raw!r}: {exc}") from None
    if resolved != root and root not in resolved.parents:
        raise PathEscapeError(f"{raw!r} resolves outside the project root")
    rel_parts = resolved.relative_to(root).parts
    if rel_parts and rel_parts[0] in {".git", ".hg", ".svn"}:
        raise PathEscapeError(f"{raw!r} is inside version-control internals")
    if is_secret_path(resolved.name):
        raise PathEscapeError(f"{raw!r} is a secrets file and is never read")
    return resolved
