"""Error types raised by the persistence and index layer.

Hierarchy::

    StoreError
    ├── IndexNotBuiltError (LookupError)   no code index for this project yet
    ├── IndexCorruptError                  the on-disk index cannot be read
    ├── DatabaseUnreadableError            a SQLite database (memory, sessions) is damaged
    ├── StoreReadOnlyError                a write to a store that can only be read
    ├── DiskFullError                     a write failed for want of space; nothing half-written
    ├── BackendUnavailableError (ConnectionError)  Chroma/Postgres/embedding endpoint down
    ├── ConflictError                      a memory write collides with an existing one
    └── SecretRefusedError (ValueError)    a memory write contains a secret
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class for store errors."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class IndexNotBuiltError(StoreError, LookupError):
    """The project has no code index yet."""

    hint = "run `engram index` first"


class IndexCorruptError(StoreError):
    """The on-disk index cannot be read."""

    hint = "`engram doctor` names the index folder: delete it and run `engram index` again"


class DatabaseUnreadableError(StoreError):
    """A SQLite database cannot be read: truncated, overwritten, or not a database at all."""

    hint = "run `engram doctor`; move the damaged file aside to start afresh"


class StoreReadOnlyError(StoreError):
    """A write to a store that was opened read-only (its folder cannot be written)."""

    hint = (
        "make ENGRAM_HOME writable, or point ENGRAM_HOME at a writable folder; reading "
        "commands such as `engram memory export` still work"
    )


class DiskFullError(StoreError):
    """A write failed because the disk is full; the transaction was rolled back."""

    hint = "free some space and run the command again; what was saved before stays saved"


class BackendUnavailableError(StoreError, ConnectionError):
    """An external backend (Chroma server, Postgres, embeddings endpoint) cannot be reached."""


class ConflictError(StoreError):
    """A memory write collides with an existing entry; the user has to choose."""


class SecretRefusedError(StoreError, ValueError):
    """A memory write contains something that looks like a secret."""

    hint = "remove the secret from the text; engram never stores credentials"
