"""Task profile (type, risk, features) and Phase 0: which experience a task gets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph.profile._phase0_loading import FactsRecaller, Phase0Result, run_phase0
    from engram.graph.profile._phase0_selection import episode_weight
    from engram.graph.profile._task_profile import TaskProfile, is_high_risk, profile_task
    from engram.graph.profile._task_type import DEFAULT_TASK_TYPE

__all__ = [
    "DEFAULT_TASK_TYPE",
    "FactsRecaller",
    "Phase0Result",
    "TaskProfile",
    "episode_weight",
    "is_high_risk",
    "profile_task",
    "run_phase0",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph.profile._phase0_loading": ("FactsRecaller", "Phase0Result", "run_phase0"),
        "engram.graph.profile._phase0_selection": ("episode_weight",),
        "engram.graph.profile._task_profile": ("TaskProfile", "is_high_risk", "profile_task"),
        "engram.graph.profile._task_type": ("DEFAULT_TASK_TYPE",),
    },
)
