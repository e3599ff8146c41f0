"""Persist context-pack feedback (memory hit rate, plan deviations) per project and task type.

Kept on the memory ``BaseStore`` under ``("pack", "feedback", <project label>)`` with the task
type as the key, so the budget formula learns across sessions. The arithmetic that updates a
``Feedback`` is pure and lives in ``engram.graph.pack._budget``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph.store.base import BaseStore

from engram.stores._errors import StoreError
from engram.stores.project import namespace_label


@dataclass(frozen=True)
class Feedback:
    """What past tasks of one type taught the budget: memory use and plan deviations."""

    hits: tuple[bool, ...] = ()
    """Whether injected memory was used, per recent task, oldest first."""
    ratio: float | None = None
    """Learned context ratio; None keeps the table value."""
    deviations: tuple[float, ...] = field(default=())
    """Actual ÷ planned use of the current streak of misses (reset by a task on plan)."""

    def to_value(self) -> dict[str, Any]:
        """Return the JSON value stored for this feedback."""
        return {"hits": list(self.hits), "ratio": self.ratio, "deviations": list(self.deviations)}

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> Feedback:
        """Rebuild feedback from a stored value.

        Raises:
            StoreError: The value is not a feedback record.
        """
        try:
            ratio = value.get("ratio")
            return cls(
                hits=tuple(bool(h) for h in value.get("hits", [])),
                ratio=None if ratio is None else float(ratio),
                deviations=tuple(float(d) for d in value.get("deviations", [])),
            )
        except (AttributeError, TypeError, ValueError) as exc:
            raise StoreError(
                f"unreadable pack feedback record: {exc}",
                hint="delete it with `engram memory` tools or let the next task overwrite it",
            ) from exc


class PackFeedbackStore(Protocol):
    """Where pack feedback lives."""

    def get(self, project_key: str, task_type: str) -> Feedback:
        """Return the feedback of one project and task type (empty when none is recorded)."""
        ...

    def put(self, project_key: str, task_type: str, feedback: Feedback) -> None:
        """Save the feedback of one project and task type."""
        ...


def feedback_namespace(project_key: str) -> tuple[str, ...]:
    """Return the store namespace of a project's pack feedback."""
    return ("pack", "feedback", namespace_label(project_key))


class BaseStorePackFeedback:
    """Pack feedback on a LangGraph ``BaseStore`` (SQLite, Postgres or in-memory)."""

    def __init__(self, store: BaseStore) -> None:
        self.store = store

    def get(self, project_key: str, task_type: str) -> Feedback:
        """Return the stored feedback, or an empty one."""
        item = self.store.get(feedback_namespace(project_key), task_type)
        return Feedback() if item is None else Feedback.from_value(item.value)

    def put(self, project_key: str, task_type: str, feedback: Feedback) -> None:
        """Save the feedback (replacing what was there)."""
        self.store.put(feedback_namespace(project_key), task_type, feedback.to_value())


class InMemoryPackFeedback:
    """Pack feedback in a dict, for fast tests."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Feedback] = {}

    def get(self, project_key: str, task_type: str) -> Feedback:
        """Return the stored feedback, or an empty one."""
        return self._data.get((project_key, task_type), Feedback())

    def put(self, project_key: str, task_type: str, feedback: Feedback) -> None:
        """Save the feedback (replacing what was there)."""
        self._data[(project_key, task_type)] = feedback
