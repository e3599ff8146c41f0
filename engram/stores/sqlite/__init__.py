"""SQLite and server back ends: checkpointers, the memory store, read-only opening, listing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.sqlite._backends import database_url, open_checkpointer, open_memory_store
    from engram.stores.sqlite._files import (
        CHECKPOINT_DB,
        MEMORY_DB,
        database_errors,
        sqlite_connect,
    )
    from engram.stores.sqlite._postgres import postgres_server, probe_postgres
    from engram.stores.sqlite._readonly import connect_read_only
    from engram.stores.sqlite._session_listing import (
        checkpoint_ids,
        session_metadata,
        session_rows,
        thread_ids,
    )

__all__ = [
    "CHECKPOINT_DB",
    "MEMORY_DB",
    "checkpoint_ids",
    "connect_read_only",
    "database_errors",
    "database_url",
    "open_checkpointer",
    "open_memory_store",
    "postgres_server",
    "probe_postgres",
    "session_metadata",
    "session_rows",
    "sqlite_connect",
    "thread_ids",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.sqlite._backends": (
            "database_url",
            "open_checkpointer",
            "open_memory_store",
        ),
        "engram.stores.sqlite._files": (
            "CHECKPOINT_DB",
            "MEMORY_DB",
            "database_errors",
            "sqlite_connect",
        ),
        "engram.stores.sqlite._postgres": ("postgres_server", "probe_postgres"),
        "engram.stores.sqlite._readonly": ("connect_read_only",),
        "engram.stores.sqlite._session_listing": (
            "checkpoint_ids",
            "session_metadata",
            "session_rows",
            "thread_ids",
        ),
    },
)
