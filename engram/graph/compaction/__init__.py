"""History compaction: validation, tool-result clearing, model and extractive summaries."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "CompactionResult": "engram.graph.compaction.compaction_transaction",
    "compact_now": "engram.graph.compaction.compaction_transaction",
}

__all__ = [
    "CompactionResult",
    "compact_now",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
