"""A checkout's git history as data: commits reachable from HEAD, mined once, kept current."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.history._mining import (
        BULK_FILES,
        GIT_TIMEOUT_S,
        MAX_COMMITS,
        Commit,
        HistoryUnavailable,
    )
    from engram.stores.history._store import (
        HISTORY_FILE,
        History,
        load_history,
        refresh_history,
    )

__all__ = [
    "BULK_FILES",
    "Commit",
    "GIT_TIMEOUT_S",
    "HISTORY_FILE",
    "History",
    "HistoryUnavailable",
    "MAX_COMMITS",
    "load_history",
    "refresh_history",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.history._mining": (
            "BULK_FILES",
            "GIT_TIMEOUT_S",
            "MAX_COMMITS",
            "Commit",
            "HistoryUnavailable",
        ),
        "engram.stores.history._store": (
            "HISTORY_FILE",
            "History",
            "load_history",
            "refresh_history",
        ),
    },
)
