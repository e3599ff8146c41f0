"""Saved sessions: rewind and undo, ids, forks and compaction, the per-task commit."""

from __future__ import annotations

__all__: list[str] = []
