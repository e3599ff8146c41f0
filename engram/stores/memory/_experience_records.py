"""Define the experience records (strategy, pattern, episode) and their JSON form.

Records are frozen dataclasses with validated fields; ``to_dict``/``record_from_dict`` are
exact inverses, so what goes into the store (or a Markdown export) comes back unchanged.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal, TypeAlias

Kind = Literal["strategy", "pattern", "episode"]
KINDS: tuple[Kind, ...] = ("strategy", "pattern", "episode")
Priority = Literal["high", "medium", "low"]
PRIORITIES: tuple[Priority, ...] = ("high", "medium", "low")
Outcome = Literal["success", "failure", "unknown"]
OUTCOMES: tuple[Outcome, ...] = ("success", "failure", "unknown")
SEVERITY_MIN = 1
"""Severity 1 is the worst incident; such episodes are never archived."""
SEVERITY_MAX = 4
DEFAULT_SEVERITY = 3
CONFIDENCE_FLOOR = -1
"""Lowest stored confidence: a pattern at 1 that fails lands here and is retired."""
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")


def new_id(prefix: str, now: datetime) -> str:
    """Return a new file-name-safe record id like ``pat-20260415-3fa2c1``."""
    return f"{prefix}-{now:%Y%m%d}-{secrets.token_hex(3)}"


def _dt(value: str | datetime) -> datetime:
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _check_id(record_id: str) -> None:
    if not _ID.match(record_id):
        raise ValueError(f"invalid id {record_id!r}: use letters, digits, '.', '_' or '-'")


def _check_choice(name: str, value: object, choices: Collection[object]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}")


@dataclass(frozen=True)
class Trigger:
    """When a pattern applies; an unset condition matches anything."""

    task_types: tuple[str, ...] = ()
    min_files: int | None = None
    """Matches tasks touching at least this many files (multi-file > 5 is ``6``)."""
    has_tests: bool | None = None
    production: bool | None = None
    features: tuple[str, ...] = ()
    """Profile feature tags that must all be present (``auth``, ``schema``, …)."""

    def matches(
        self,
        *,
        task_type: str,
        files_affected: int,
        has_tests: bool | None,
        production: bool,
        features: Collection[str] = (),
    ) -> bool:
        """Tell whether a task with these features triggers the pattern.

        An unknown ``has_tests`` matches either condition: a warning about missing tests is
        worth showing when nobody knows whether tests exist.
        """
        if self.task_types and task_type not in self.task_types:
            return False
        if self.min_files is not None and files_affected < self.min_files:
            return False
        if self.has_tests is not None and has_tests is not None and has_tests != self.has_tests:
            return False
        if self.production is not None and production != self.production:
            return False
        return all(tag in features for tag in self.features)

    def key(self) -> tuple[Any, ...]:
        """Return a canonical key: patterns with equal keys compete for one trigger."""
        return (
            tuple(sorted(self.task_types)),
            self.min_files,
            self.has_tests,
            self.production,
            tuple(sorted(self.features)),
        )

    def describe(self) -> str:
        """Return the trigger in words, e.g. ``refactor; files >= 6; no tests``."""
        parts = ["/".join(self.task_types)] if self.task_types else []
        if self.min_files is not None:
            parts.append(f"files >= {self.min_files}")
        if self.has_tests is not None:
            parts.append("has tests" if self.has_tests else "no tests")
        if self.production is not None:
            parts.append("production" if self.production else "not production")
        parts.extend(self.features)
        return "; ".join(parts) or "any task"

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "task_types": list(self.task_types),
            "min_files": self.min_files,
            "has_tests": self.has_tests,
            "production": self.production,
            "features": list(self.features),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trigger:
        """Build from the JSON form (missing keys mean "any")."""
        return cls(
            task_types=tuple(data.get("task_types") or ()),
            min_files=data.get("min_files"),
            has_tests=data.get("has_tests"),
            production=data.get("production"),
            features=tuple(data.get("features") or ()),
        )


@dataclass(frozen=True)
class Strategy:
    """A high-level principle looked up directly by task type or feature tag."""

    kind: ClassVar[Kind] = "strategy"
    id: str
    principle: str
    applies_to: tuple[str, ...]
    """Task types and feature tags this principle is injected for."""
    priority: Priority = "medium"
    source: str = ""
    scope: Literal["project", "global"] = "project"
    created: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        _check_id(self.id)
        _check_choice("priority", self.priority, PRIORITIES)
        _check_choice("scope", self.scope, ("project", "global"))
        if not self.principle.strip():
            raise ValueError("a strategy needs a principle")


@dataclass(frozen=True)
class Pattern:
    """A recurring failure with its trigger, cause, prevention and a confidence of 1–5."""

    kind: ClassVar[Kind] = "pattern"
    id: str
    name: str
    trigger: Trigger
    failure: str = ""
    """How the failure shows (failure manifestation)."""
    root_cause: str = ""
    prevention: str = ""
    confidence: int = 3
    last_validated: datetime = field(default_factory=lambda: datetime.now(UTC))
    superseded_by: str | None = None
    status: Literal["active", "retired"] = "active"
    needs_reanalysis: bool = False
    evidence: tuple[str, ...] = ()
    """Ids of the episodes this pattern was learned from (they are never archived)."""
    conflicts_with: tuple[str, ...] = ()
    """Patterns on the same trigger that disagree; flagged for refinement."""
    created: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        _check_id(self.id)
        _check_choice("status", self.status, ("active", "retired"))
        if not self.name.strip():
            raise ValueError("a pattern needs a name")
        if not CONFIDENCE_FLOOR <= self.confidence <= 5:
            raise ValueError(f"confidence must be between 1 and 5, not {self.confidence}")


@dataclass(frozen=True)
class Episode:
    """One finished task: what was done, how it went and what to remember."""

    kind: ClassVar[Kind] = "episode"
    id: str
    date: datetime
    task_type: str
    summary: str
    outcome: Outcome = "unknown"
    files: tuple[str, ...] = ()
    lesson: str = ""
    prevention: str = ""
    severity: int = DEFAULT_SEVERITY
    """1 (worst incident) to 4 (trivial)."""
    patterns_applied: tuple[str, ...] = ()
    thread_id: str = ""
    confirmed: bool = False
    """Whether the outcome is a verdict (user or run flag), not inferred or unknown."""

    def __post_init__(self) -> None:
        _check_id(self.id)
        _check_choice("outcome", self.outcome, OUTCOMES)
        if not SEVERITY_MIN <= self.severity <= SEVERITY_MAX:
            raise ValueError(f"severity must be between {SEVERITY_MIN} and {SEVERITY_MAX}")

    @property
    def created(self) -> datetime:
        """Return when the episode happened (records sort by this)."""
        return self.date


Record: TypeAlias = Strategy | Pattern | Episode
_TUPLES = {"applies_to", "evidence", "conflicts_with", "files", "patterns_applied"}
_DATES = {"created", "last_validated", "date"}


def record_to_dict(record: Record) -> dict[str, Any]:
    """Return the JSON form of ``record`` (dates as ISO strings, tuples as lists)."""
    out: dict[str, Any] = {}
    for name in (f.name for f in fields(record)):
        value = getattr(record, name)
        if isinstance(value, datetime):
            # One UTC spelling so stored dates compare correctly as strings in store filters.
            value = value.astimezone(UTC).isoformat(timespec="microseconds")
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Trigger):
            value = value.to_dict()
        out[name] = value
    return out


_FIELD_NAMES: dict[Kind, tuple[str, ...]] = {
    "strategy": tuple(f.name for f in fields(Strategy)),
    "pattern": tuple(f.name for f in fields(Pattern)),
    "episode": tuple(f.name for f in fields(Episode)),
}


def record_from_dict(kind: Kind, data: Mapping[str, Any]) -> Record:
    """Build a record of ``kind`` from its JSON form.

    Raises:
        ValueError: A field is missing or invalid.
    """
    cls: type[Strategy] | type[Pattern] | type[Episode] = {
        "strategy": Strategy,
        "pattern": Pattern,
        "episode": Episode,
    }[kind]
    values: dict[str, Any] = {}
    for name in _FIELD_NAMES[kind]:
        if name not in data:
            continue
        value = data[name]
        if name in _TUPLES:
            value = tuple(value or ())
        elif name in _DATES:
            value = _dt(value)
        elif name == "trigger":
            value = Trigger.from_dict(value or {})
        values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ValueError(f"bad {kind} record: {exc}") from exc


def record_texts(record: Record) -> Iterable[str]:
    """Yield every free-text field of ``record`` (for the secret check)."""
    for name in (f.name for f in fields(record)):
        value = getattr(record, name)
        if isinstance(value, str):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, str))
