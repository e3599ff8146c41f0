"""Snapshots of the working tree taken around every edit and command, and rewinding to them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.snapshots._log import (
        VERIFY_TOOL,
        RecordKind,
        SnapshotLog,
        SnapshotRecord,
        new_record,
    )
    from engram.stores.snapshots._rewind import (
        UNDO_TOOL,
        apply_rewind,
        code_at,
        kept_at,
        live_changes,
        plan_rewind,
    )
    from engram.stores.snapshots._trees import TreeStore, changed_paths, open_trees

__all__ = [
    "RecordKind",
    "SnapshotLog",
    "SnapshotRecord",
    "TreeStore",
    "UNDO_TOOL",
    "VERIFY_TOOL",
    "apply_rewind",
    "changed_paths",
    "code_at",
    "kept_at",
    "live_changes",
    "new_record",
    "open_trees",
    "plan_rewind",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.snapshots._log": (
            "RecordKind",
            "SnapshotLog",
            "SnapshotRecord",
            "VERIFY_TOOL",
            "new_record",
        ),
        "engram.stores.snapshots._rewind": (
            "UNDO_TOOL",
            "apply_rewind",
            "code_at",
            "kept_at",
            "live_changes",
            "plan_rewind",
        ),
        "engram.stores.snapshots._trees": ("TreeStore", "changed_paths", "open_trees"),
    },
)
