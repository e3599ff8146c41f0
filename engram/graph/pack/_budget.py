"""Pure context-pack budget math: the budget formula and its feedback arithmetic.

budget = window × BASE_FRACTION × memory weight × context ratio, capped by the window, where
memory weight = MEMORY_WEIGHT_FLOOR + MEMORY_WEIGHT_SPAN × memory hit rate over the last
HIT_RATE_WINDOW tasks of the same type, and the context ratio comes from the task type. After
DEVIATION_STREAK consecutive tasks whose actual use differs from the plan by more than
DEVIATION_LIMIT, that type's ratio moves RATIO_STEP toward the actual. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from engram.stores.memory import Feedback

BASE_FRACTION = 0.6
"""Share of the window the input may use; the rest is kept for output and the system prompt."""
MEMORY_WEIGHT_FLOOR = 0.3
"""Memory weight when injected memory was never used."""
MEMORY_WEIGHT_SPAN = 0.4
"""How much a perfect memory hit rate adds to the memory weight."""
HIT_RATE_WINDOW = 10
"""Recent tasks of one type whose memory use sets the hit rate."""
PRIOR_HIT_RATE = 0.5
"""Hit rate assumed for a task type with no recorded tasks yet."""
CONTEXT_RATIOS: Mapping[str, float] = {
    "debug": 0.7,
    "refactor": 0.5,
    "explain": 0.3,
    "feature": 0.3,
}
"""Context ratio per task type (seed table): locating a bug needs the most code."""
DEFAULT_CONTEXT_RATIO = 0.4
"""Context ratio of task types the seed table does not name (test, docs, ops, …)."""
DEVIATION_LIMIT = 0.15
"""Relative difference between planned and actual use that counts as a miss."""
DEVIATION_STREAK = 3
"""Consecutive misses that move a type's context ratio."""
RATIO_STEP = 0.05
"""How far one adjustment moves a context ratio."""
RATIO_MIN = 0.1
"""Lowest context ratio feedback may reach."""
RATIO_MAX = 1.0
"""Highest context ratio feedback may reach."""

BudgetSource = Literal["formula", "override"]


@dataclass(frozen=True)
class BudgetPlan:
    """The pack budget for one task and the factors it came from."""

    budget: int
    window: int
    base: int
    memory_weight: float
    context_ratio: float
    hit_rate: float
    task_type: str
    source: BudgetSource

    def to_dict(self) -> dict[str, object]:
        """Return the plan as JSON-ready values."""
        return {
            "budget": self.budget,
            "window": self.window,
            "base": self.base,
            "memory_weight": round(self.memory_weight, 4),
            "context_ratio": round(self.context_ratio, 4),
            "hit_rate": round(self.hit_rate, 4),
            "task_type": self.task_type,
            "source": self.source,
        }


def hit_rate(feedback: Feedback) -> float:
    """Return the share of recent tasks that used injected memory (the prior when none)."""
    recent = feedback.hits[-HIT_RATE_WINDOW:]
    if not recent:
        return PRIOR_HIT_RATE
    return sum(recent) / len(recent)


def memory_weight(rate: float) -> float:
    """Return the memory weight for a hit rate in [0, 1] (clamped)."""
    return MEMORY_WEIGHT_FLOOR + MEMORY_WEIGHT_SPAN * min(1.0, max(0.0, rate))


def context_ratio(task_type: str, feedback: Feedback | None = None) -> float:
    """Return the context ratio of ``task_type``: the learned one, else the table's."""
    if feedback is not None and feedback.ratio is not None:
        return feedback.ratio
    return CONTEXT_RATIOS.get(task_type, DEFAULT_CONTEXT_RATIO)


def plan_budget(
    window: int, task_type: str, feedback: Feedback | None = None, *, override: int = 0
) -> BudgetPlan:
    """Compute the pack budget for one task.

    Args:
        window: Model context window in tokens.
        task_type: Phase 0 task type (debug, refactor, explain, feature, …).
        feedback: What past tasks of this type recorded; None uses the priors.
        override: A budget set by the user (``--budget``); 0 derives it.

    Returns:
        The budget and its factors; an override is still capped by the window.
    """
    feedback = feedback or Feedback()
    rate = hit_rate(feedback)
    weight = memory_weight(rate)
    ratio = context_ratio(task_type, feedback)
    base = int(window * BASE_FRACTION)
    if override > 0:
        budget, source = min(override, window), "override"
    else:
        budget, source = min(window, int(base * weight * ratio)), "formula"
    return BudgetPlan(
        budget=budget,
        window=window,
        base=base,
        memory_weight=weight,
        context_ratio=ratio,
        hit_rate=rate,
        task_type=task_type,
        source=source,  # type: ignore[arg-type]
    )


def record_hit(feedback: Feedback, used: bool) -> Feedback:
    """Return ``feedback`` with one more task's memory use, keeping the last window."""
    return replace(feedback, hits=(*feedback.hits, bool(used))[-HIT_RATE_WINDOW:])


def record_usage(feedback: Feedback, *, task_type: str, planned: int, actual: int) -> Feedback:
    """Return ``feedback`` after one task used ``actual`` tokens of a ``planned`` budget.

    A task within DEVIATION_LIMIT of its plan ends the streak. The DEVIATION_STREAK-th
    consecutive miss moves the context ratio RATIO_STEP toward the ratio that would have
    planned the mean actual use (never past it), then starts a new streak.
    """
    if planned <= 0:
        return feedback
    share = actual / planned
    if abs(share - 1.0) <= DEVIATION_LIMIT:
        return replace(feedback, deviations=())
    streak = (*feedback.deviations, share)
    if len(streak) < DEVIATION_STREAK:
        return replace(feedback, deviations=streak)
    ratio = context_ratio(task_type, feedback)
    target = ratio * _mean(streak[-DEVIATION_STREAK:])
    step = min(RATIO_STEP, abs(target - ratio))
    moved = ratio + step if target > ratio else ratio - step
    moved = round(min(RATIO_MAX, max(RATIO_MIN, moved)), 6)
    return replace(feedback, ratio=moved, deviations=())


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)
