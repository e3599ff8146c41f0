"""History compaction: validation, tool-result clearing, model and extractive summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph.compaction._history_rules import commit_messages, is_cleared
    from engram.graph.compaction._tool_pairing import close_unanswered_calls
    from engram.graph.compaction._transaction import (
        CompactionResult,
        Request,
        clear_pass,
        compact_now,
        emergency_compact,
    )

__all__ = [
    "CompactionResult",
    "Request",
    "clear_pass",
    "close_unanswered_calls",
    "commit_messages",
    "compact_now",
    "emergency_compact",
    "is_cleared",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph.compaction._history_rules": ("commit_messages", "is_cleared"),
        "engram.graph.compaction._tool_pairing": ("close_unanswered_calls",),
        "engram.graph.compaction._transaction": (
            "CompactionResult",
            "Request",
            "clear_pass",
            "compact_now",
            "emergency_compact",
        ),
    },
)
