"""What the CLI says when storage fails: a full disk, a read-only folder, a damaged database."""

from __future__ import annotations

import errno
import sys

DOCTOR_HINT = "run `engram doctor` to find the damaged store and repair what can be rebuilt"
WRITABLE_HINT = (
    "make ENGRAM_HOME and the project's .engram/ writable, or point ENGRAM_HOME at a writable "
    "folder; reading commands such as `engram memory export` still work"
)


def storage_failures() -> tuple[type[BaseException], ...]:
    """Return the exception types ``storage_message`` knows (SQLite's only once loaded)."""
    sqlite3 = sys.modules.get("sqlite3")  # not imported here: the CLI starts without it
    return (OSError,) if sqlite3 is None else (OSError, sqlite3.DatabaseError)


def storage_message(exc: BaseException) -> tuple[str, str] | None:
    """Return (message, what to do) for a storage failure, or None for any other error."""
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError):
        if "full" in str(exc):
            return (
                "the disk is full: the database write was rolled back",
                "free some space and run the command again; what was saved before stays saved",
            )
        return f"a database engram uses cannot be used: {exc}", DOCTOR_HINT
    if not isinstance(exc, OSError):
        return None
    where = f" {exc.filename}" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"the disk is full (writing{where})",
            "free some space and run the command again; what was saved before stays saved",
        )
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write{where}: {exc.strerror}", WRITABLE_HINT
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return (
            f"cannot create the folder{where}: a file is in the way",
            "ENGRAM_HOME and the project's .engram must be folders; point ENGRAM_HOME at one",
        )
    return None
