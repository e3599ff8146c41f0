"""Persistence, indexes and pure domain logic: everything below the graph core."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "open_checkpointer": "engram.stores.backends",
    "open_memory_store": "engram.stores.backends",
    "StoreError": "engram.stores.errors",
    "walk_project": "engram.stores.walk",
}

__all__ = [
    "StoreError",
    "open_checkpointer",
    "open_memory_store",
    "walk_project",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
