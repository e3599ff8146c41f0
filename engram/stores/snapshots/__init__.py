"""Snapshots of the working tree taken around every edit and command, and rewinding to them."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "SnapshotLog": "engram.stores.snapshots.snapshot_log",
    "SnapshotRecord": "engram.stores.snapshots.snapshot_log",
    "apply_rewind": "engram.stores.snapshots.rewind",
    "code_at": "engram.stores.snapshots.rewind",
    "plan_rewind": "engram.stores.snapshots.rewind",
    "open_trees": "engram.stores.snapshots.trees",
}

__all__ = [
    "SnapshotLog",
    "SnapshotRecord",
    "apply_rewind",
    "code_at",
    "open_trees",
    "plan_rewind",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
