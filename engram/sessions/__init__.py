"""Saved sessions: rewind and undo, ids, forks and compaction, the per-task commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.sessions._actions import compact_session, partitions, record_outcome
    from engram.sessions._app import App
    from engram.sessions._ids import (
        CHECKPOINT_PREFIX_MIN,
        load_snapshot,
        resolve_checkpoint,
        resolve_thread,
        unique_prefixes,
    )
    from engram.sessions._rewind import last_turn_start, rewind_session, undo_last_change

__all__ = [
    "App",
    "CHECKPOINT_PREFIX_MIN",
    "compact_session",
    "last_turn_start",
    "load_snapshot",
    "partitions",
    "record_outcome",
    "resolve_checkpoint",
    "resolve_thread",
    "rewind_session",
    "undo_last_change",
    "unique_prefixes",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.sessions._actions": ("compact_session", "partitions", "record_outcome"),
        "engram.sessions._app": ("App",),
        "engram.sessions._ids": (
            "CHECKPOINT_PREFIX_MIN",
            "load_snapshot",
            "resolve_checkpoint",
            "resolve_thread",
            "unique_prefixes",
        ),
        "engram.sessions._rewind": ("last_turn_start", "rewind_session", "undo_last_change"),
    },
)
