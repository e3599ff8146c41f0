"""Where the warm server's socket, lock and log live, who may use them, and its code version.

Standard library only: the client reads this before Typer, Rich or engram's stores load.

The socket lives in a folder only the user can enter (``ENGRAM_HOME/serve/``, mode 0700). A
Unix socket path holds at most 107 bytes, so when ``ENGRAM_HOME`` is deep the socket goes to a
short folder of the same kind named after ``ENGRAM_HOME``: under ``$XDG_RUNTIME_DIR`` when set,
else ``/tmp/engram-<uid>/``. A folder or socket owned by another user, reachable by the group or
others, or that is a symbolic link is never used (``UnsafeSocketError``).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

SERVE_DIR = "serve"
"""The server's folder under ENGRAM_HOME (lock, log, and the socket when the path is short)."""

SOCKET_NAME = "sock"
MAX_SOCKET_PATH = 100
"""Longest socket path used (the kernel's limit is 107 bytes plus a terminating NUL)."""

PRIVATE_MODE = 0o700


class UnsafeSocketError(OSError):
    """A socket folder or file another user could reach or replace: refused, never used."""


@dataclass(frozen=True)
class ServePaths:
    """The files of one ENGRAM_HOME's warm server."""

    folder: Path
    """ENGRAM_HOME/serve: the lock, the log and the pid file."""
    socket: Path
    """The Unix socket (in ``folder`` unless that path is too long)."""

    @property
    def lock(self) -> Path:
        """Held by the running server for its lifetime (one server per ENGRAM_HOME)."""
        return self.folder / "lock"

    @property
    def log(self) -> Path:
        """Where a server started in the background writes."""
        return self.folder / "serve.log"


def engram_home() -> Path:
    """Return ENGRAM_HOME as the stores resolve it (``~/.engram`` by default)."""
    raw = os.environ.get("ENGRAM_HOME") or "~/.engram"
    return Path(raw).expanduser().resolve()


def serve_paths(home: Path | None = None) -> ServePaths:
    """Return the server's paths for ``home`` (default: ENGRAM_HOME), short enough to bind."""
    home = home or engram_home()
    folder = home / SERVE_DIR
    socket = folder / SOCKET_NAME
    if len(os.fsencode(socket)) <= MAX_SOCKET_PATH:
        return ServePaths(folder, socket)
    name = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = Path(runtime) / "engram" if runtime else Path("/tmp") / f"engram-{os.getuid()}"
    return ServePaths(folder, base / name / SOCKET_NAME)


def private_folder(path: Path, *, create: bool) -> None:
    """Check that ``path`` is a folder only this user can use, creating it (0700) if asked.

    Raises:
        UnsafeSocketError: It is a link, not a folder, another user's, or open to others.
        FileNotFoundError: It does not exist and ``create`` is False.
    """
    if create:
        try:
            path.mkdir(mode=PRIVATE_MODE, parents=True)
        except FileExistsError:
            pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeSocketError(f"{path} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeSocketError(f"{path} is not a folder")
    if info.st_uid != os.getuid():
        raise UnsafeSocketError(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        raise UnsafeSocketError(
            f"{path} can be used by other users (mode {stat.S_IMODE(info.st_mode):o})"
        )


def socket_folders(paths: ServePaths) -> list[Path]:
    """Return the folders that must be private for the socket, outermost first.

    A socket outside ENGRAM_HOME sits two levels under a shared folder (``/tmp`` or the
    runtime folder), and both levels are engram's own.
    """
    if paths.socket.parent == paths.folder:
        return [paths.folder]
    return [paths.folder, paths.socket.parent.parent, paths.socket.parent]


def check_folders(paths: ServePaths, *, create: bool) -> None:
    """Check (creating them if asked) every folder the server's files live in.

    Raises:
        UnsafeSocketError: One of them another user could reach or replace.
        FileNotFoundError: One is missing and ``create`` is False.
    """
    for folder in socket_folders(paths):
        private_folder(folder, create=create)


def check_socket_file(path: Path) -> None:
    """Check that ``path`` is this user's socket (not a link, not another user's file).

    Raises:
        UnsafeSocketError: It is anything else.
        FileNotFoundError: There is no socket.
    """
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode):
        raise UnsafeSocketError(f"{path} is not a socket")
    if info.st_uid != os.getuid():
        raise UnsafeSocketError(f"{path} belongs to another user (uid {info.st_uid})")


def code_version() -> str:
    """Return engram's version and a digest of its installed code (names, sizes, mtimes).

    Any reinstall, upgrade or edit of a module changes it, so a client never talks to a
    server running other code. About 300 ``stat`` calls: a few milliseconds.
    """
    import engram

    package = Path(engram.__file__).parent
    digest = hashlib.sha256()
    pending = [package]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append(Path(entry.path))
                elif entry.name.endswith(".py"):
                    info = entry.stat(follow_symlinks=False)
                    digest.update(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return f"{engram.__version__}+{digest.hexdigest()[:16]}"
