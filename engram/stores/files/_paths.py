"""The project's one access policy: which paths may leave the project, and how files are opened.

Every reader of project bytes goes through this module — the model's tools, the MCP server,
the index walk, slices and the context pack — so one set of rules holds everywhere:

- a path never resolves outside the root (``..``, absolute paths, ``~``, symlinks);
- version-control internals and engram's own folder (``.git``, ``.hg``, ``.svn``,
  ``.engram``) are never read, under any name, except a folder explicitly allowed by the
  caller (a session's own spilled tool outputs);
- secrets files (:data:`SECRET_NAME_PATTERNS`, :data:`SECRET_PATH_PATTERNS`) are never read,
  whether named directly or reached through a symlink;
- only regular files are opened (never FIFOs, sockets or devices, which can block forever);
- hard-linked files (``st_nlink > 1``) are never read: their other names cannot be found,
  so one of them may lie outside the project or be a secrets file. This refuses some
  harmless files (``cp -al`` backups, some package-manager stores) in exchange for never
  leaking one that is not.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import unicodedata
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from engram.stores._errors import StoreError

PROTECTED_DIRS = frozenset({".git", ".hg", ".svn", ".engram"})
"""Folders whose contents never leave the project: VCS internals, ledgers, spilled outputs."""

SKIP_DIRS = PROTECTED_DIRS | frozenset(
    {
        ".venv",
        "venv",
        "env",
        ".env",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "build",
        "dist",
        "target",
        "out",
        ".gradle",
        ".idea",
        ".vscode",
        ".next",
        ".cache",
        "site-packages",
        ".eggs",
        "coverage",
        ".terraform",
    }
)
"""Folder names never walked: VCS internals, virtualenvs, dependencies, build output, caches."""

SECRET_NAME_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "*.ovpn",
    "id_rsa",
    "id_rsa.*",
    "id_dsa",
    "id_dsa.*",
    "id_ecdsa",
    "id_ecdsa.*",
    "id_ed25519",
    "id_ed25519.*",
    "*_rsa",
    "*_dsa",
    "*_ecdsa",
    "*_ed25519",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".yarnrc.yml",
    ".git-credentials",
    ".vault-token",
    ".s3cfg",
    ".boto",
    ".htpasswd",
    ".dockercfg",
    ".my.cnf",
    ".authinfo",
    ".authinfo.gpg",
    ".terraformrc",
    "terraform.rc",
    "kubeconfig",
    "credentials",
    "credentials.json",
    "credentials.toml",
    "credentials.yml",
    "credentials.yaml",
    "client_secret*.json",
    "service-account*.json",
    "service_account*.json",
    "application_default_credentials.json",
    "accesstokens.json",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.toml",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    "*.tfstate",
    "*.tfstate.backup",
    "terraform.tfvars",
    "*.auto.tfvars",
    "wp-config.php",
)
"""File-name patterns (lower case) of secrets files: never indexed, listed or read."""

SECRET_PATH_PATTERNS = (
    ".docker/config.json",
    ".aws/credentials",
    ".aws/config",
    ".kube/config",
    ".ssh/*",
    ".gnupg/*",
    ".cargo/credentials",
    ".gem/credentials",
    ".composer/auth.json",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/gcloud/*",
    ".m2/settings.xml",
    ".azure/*",
    ".password-store/*",
)
"""Path-tail patterns (lower case) of secrets files whose names alone are too common."""

_SECRET_NAME = re.compile("|".join(fnmatch.translate(p) for p in SECRET_NAME_PATTERNS))
_SECRET_TAIL = re.compile("|".join(r"(?:^|/)" + fnmatch.translate(p) for p in SECRET_PATH_PATTERNS))

SECRET_EXAMPLES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
"""Template files named like secrets files but meant to be committed."""

MAX_PATH_CHARS = 4096


class PathEscapeError(StoreError, PermissionError):
    """A path resolves outside the project root or names a protected file."""


class UnsafeFileError(StoreError, PermissionError):
    """A file is not a plain regular file with a single name (FIFO, device, hard link)."""


def is_secret_path(path: str | os.PathLike[str]) -> bool:
    """Return True when the file's name or path tail looks like a secrets file."""
    posix = str(path).replace("\\", "/").lower().rstrip("/")
    name = posix.rsplit("/", 1)[-1]
    if not name or name in SECRET_EXAMPLES:
        return False
    return bool(_SECRET_NAME.match(name) or _SECRET_TAIL.search(posix))


def folded_name(name: str) -> str:
    """Return a file name as case-insensitive file systems compare it.

    NFC-normalised and case-folded, with the trailing dots and spaces that Windows drops:
    ``.GIT``, ``.Engram`` and ``.git.`` all name the protected folder there (and on macOS).
    """
    return unicodedata.normalize("NFC", name).casefold().rstrip(". ") or name


def is_protected_dir(name: str) -> bool:
    """Return True for a folder name that is version-control or engram internals, in any case."""
    return folded_name(name) in PROTECTED_DIRS


def is_skipped_dir(name: str) -> bool:
    """Return True for folder names that are never walked or searched."""
    return name in SKIP_DIRS or is_protected_dir(name) or name.endswith(".egg-info")


def relative_posix(root: Path, path: Path) -> str:
    """Return ``path`` relative to ``root`` with forward slashes."""
    return path.relative_to(root).as_posix()


def is_protected_or_secret(rel: str) -> bool:
    """Return True for a root-relative posix path in a protected folder or naming secrets."""
    return _refusal(rel, ()) is not None


def _refusal(rel: str, allowed: tuple[str, ...]) -> str | None:
    """Return why a root-relative posix path may not be read, or None when it may."""
    if any(rel == a or rel.startswith(a.rstrip("/") + "/") for a in allowed):
        return None
    parts = PurePosixPath(rel).parts
    if any(is_protected_dir(part) for part in parts):
        return "is inside version-control or engram internals"
    if is_secret_path(rel):
        return "is a secrets file and is never read"
    return None


def confine(root: Path, raw: str, *, allowed: tuple[str, ...] = ()) -> Path:
    """Resolve a user- or model-supplied path inside the project root.

    Both the path as written and the path it resolves to (after symlinks) must pass the
    policy, so neither a symlink named ``notes.txt`` pointing at ``.env`` nor one named
    ``.env`` gets read.

    Args:
        root: The resolved project root.
        raw: A path relative to the root (absolute paths are accepted only when they
            point inside it).
        allowed: Root-relative folders readable even inside a protected folder (a
            session's own spilled tool outputs).

    Returns:
        The resolved absolute path, guaranteed to lie inside ``root``.

    Raises:
        PathEscapeError: The path is empty, malformed, leaves the root (``..``, absolute,
            ``~``, symlinks), or names a protected folder or a secrets file.
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
    written = os.path.normpath(candidate)
    lexical = os.path.relpath(written, root) if written.startswith(str(root)) else ""
    for rel in (Path(lexical).as_posix(), relative_posix(root, resolved)):
        reason = _refusal(rel, allowed) if rel not in ("", ".") else None
        if reason:
            raise PathEscapeError(f"{raw!r} {reason}")
    return resolved


def allowed_target(root: Path, path: str | os.PathLike[str]) -> bool:
    """Return True when a symlink at ``path`` (under ``root``) may be followed.

    Its target must stay inside the root, outside skipped and protected folders, and not be
    a secrets file.
    """
    try:
        target = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    if target == root:
        return True
    if root not in target.parents:
        return False
    rel = relative_posix(root, target)
    parts = PurePosixPath(rel).parts
    return not any(is_skipped_dir(p) for p in parts[:-1]) and not is_protected_or_secret(rel)


def listable(root: Path, rel: str) -> bool:
    """Return True when a file found by a search (e.g. ripgrep) may be shown.

    A final check on results, whatever produced them: the path passes :func:`confine`, no
    folder on the way is a skipped one, no name on the way has a control character
    (:func:`unprintable_name`), and the file is a regular file with one name.
    """
    parts = PurePosixPath(rel).parts
    if any(is_skipped_dir(p) for p in parts[:-1]) or unprintable_name(rel):
        return False
    try:
        found = confine(root, rel)
        info = os.stat(found)
    except (PathEscapeError, OSError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def open_regular(path: Path) -> BinaryIO:
    """Open a regular, singly-linked file for binary reading without ever blocking.

    The file is checked before opening (so a device is never opened) and again on the open
    descriptor (so a file swapped for a FIFO in between is caught); ``O_NONBLOCK`` keeps the
    open itself from waiting for a FIFO writer.

    Raises:
        UnsafeFileError: The file is a FIFO, socket, device or folder, or has hard links.
        OSError: The file cannot be opened.
    """
    _check_plain(path, os.stat(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    try:
        _check_plain(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_regular(path: Path, max_bytes: int | None = None) -> bytes:
    """Read a regular, singly-linked file (at most ``max_bytes`` when given).

    Raises:
        UnsafeFileError: The file is not a plain regular file (see :func:`open_regular`).
        OSError: The file cannot be read.
    """
    with open_regular(path) as handle:
        return handle.read() if max_bytes is None else handle.read(max_bytes)


def _check_plain(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise UnsafeFileError(f"{Path(path).name!r} is {kind}; only regular files are read")
    if info.st_nlink > 1:
        raise UnsafeFileError(
            f"{Path(path).name!r} has {info.st_nlink} hard links; hard-linked files are never "
            "read because another of their names may be outside the project"
        )


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
}


_INVISIBLE = r"\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
"""DEL, the C1 controls, the line separators and bidirectional controls, and lone surrogates:
a regex class body shared by the patterns below."""
_UNPRINTABLE = re.compile(rf"[\x00-\x1f{_INVISIBLE}]")
"""Control characters, line separators, the bidirectional overrides that reorder shown text, and
lone surrogates (the bytes of a name that is not UTF-8, which no UTF-8 output can write)."""


def unprintable_name(path: str) -> bool:
    """Return True when a path has a control, separator or bidi character, or is not UTF-8.

    No real source file is named so; such a name is meant to forge lines or repaint a terminal
    wherever it is shown, so the walk, searches and indexes leave the file out (a path named
    on purpose is still confined as any other, and shown through :func:`display_path`).
    """
    return _UNPRINTABLE.search(path) is not None


def display_path(path: str) -> str:
    r"""Return ``path`` with control characters escaped, so a name cannot forge lines.

    Line breaks, terminal escapes and the bidirectional controls (which make a terminal or an
    editor show text in another order than it reads) are written as ``\xNN`` / ``\uNNNN``.
    Used for any repository text shown as one line: file names, commit subjects.
    """
    return _escape_characters(path, _UNPRINTABLE)


def _escape_characters(text: str, unwanted: re.Pattern[str]) -> str:
    r"""Return ``text`` with each character ``unwanted`` matches as ``\xNN`` / ``\uNNNN``."""
    return unwanted.sub(_escaped, text)


TERMINAL_UNSAFE = re.compile(rf"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")
"""What text may not carry to a terminal: control characters but the line break and the tab
(an escape sequence repaints the screen, sets the title, writes the clipboard; a carriage
return overwrites a line), the bidirectional controls that show text in another order, and lone
surrogates (bytes that are not UTF-8: writing one would fail)."""


def escape_controls(text: str) -> str:
    r"""Return ``text`` with TERMINAL_UNSAFE characters as ``\xNN`` / ``\uNNNN`` (lines kept)."""
    return _escape_characters(text, TERMINAL_UNSAFE)


JSON_UNSAFE = re.compile(f"[{_INVISIBLE}]")
"""What ``json.dumps(..., ensure_ascii=False)`` leaves as is and a terminal or UTF-8 cannot
take: DEL, the C1 controls, the bidirectional controls and lone surrogates (JSON escapes the
C0 controls itself)."""


def inert_json(text: str) -> str:
    r"""Return JSON ``text`` with each JSON_UNSAFE character as a ``\uNNNN`` escape.

    The same strings to a JSON reader, inert in a terminal, and writable as UTF-8.
    """
    return JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"
