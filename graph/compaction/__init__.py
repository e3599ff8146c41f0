"""History compaction: validation, tool-result clearing, model and extractive summaries."""

from __future__ import annotations

from importlib import import_module
from typing import Any

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
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
