"""Task profile (type, risk, features) and Phase 0: which experience a task gets."""

from __future__ import annotations

from typing import Any

from engram._lazy import lazy_attribute

_WHERE = {
    "TaskProfile": "engram.graph.profile.task_profile",
    "profile_task": "engram.graph.profile.task_profile",
    "run_phase0": "engram.graph.profile.phase0_loading",
    "Phase0Result": "engram.graph.profile.phase0_loading",
}

__all__ = [
    "Phase0Result",
    "TaskProfile",
    "profile_task",
    "run_phase0",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, so importing the package stays cheap."""
    return lazy_attribute(__name__, _WHERE, name)
