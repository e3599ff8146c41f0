"""The fact record: what a long-term fact holds, and its JSON form for stores and exports.

Provenance: every fact records who proposed it (``source``: the user, the model through
``save_memory``, auto-extraction from the user's words, or an import) and, for facts the model
proposed, which untrusted content the session had read before (``after``: the tools whose
results preceded it). A model fact proposed after untrusted content is ``quarantined``: kept,
listed and confirmable, but never recalled into a prompt until a person confirms it.

Records written before provenance existed (no ``schema``, see ``FACT_SCHEMA``) are upgraded as
they are read: a model fact nobody verified cannot show what preceded it, so it is quarantined
with ``after=("unrecorded",)``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

MEMORY_CAP_MIN = 500
"""Least tokens for the memory block."""
MEMORY_CAP_MAX = 5_000
"""Most tokens for the memory block."""
MEMORY_CAP_WINDOW_DIVISOR = 200
"""The memory cap is the context window // this, before clamping."""

Scope = Literal["project", "global"]
Source = Literal["user", "agent", "auto", "import"]
Status = Literal["verified", "unverified", "quarantined"]

SOURCES: tuple[Source, ...] = ("user", "agent", "auto", "import")
STATUSES: tuple[Status, ...] = ("verified", "unverified", "quarantined")
SOURCE_LABELS: Mapping[str, str] = {
    "user": "user",
    "agent": "model",
    "auto": "extraction",
    "import": "import",
}
"""How each source is shown: ``agent`` facts came from the model, ``auto`` ones from
auto-extraction of the user's words."""
FACT_SCHEMA = 2
"""Version of the stored record: 2 added ``after`` and the ``quarantined`` status."""
UNRECORDED = "unrecorded"
"""``after`` of a model fact stored before provenance was recorded."""


@dataclass(frozen=True, kw_only=True)
class Fact:
    """One long-term fact as stored and shown."""

    id: str
    text: str
    scope: Scope
    project_key: str
    """Normalized project path for project facts; empty for global ones."""
    created: datetime
    last_verified: datetime | None
    """When a person last confirmed it; None for facts nobody verified."""
    source: Source
    status: Status
    """``quarantined``: proposed by a model after untrusted content; out of every prompt until
    a person confirms it (``engram memory verify ID``)."""
    provenance: Mapping[str, str] = field(default_factory=dict)
    """Where it came from: session/thread id, message id, tool call id."""
    after: tuple[str, ...] = ()
    """Untrusted content the session had read before the model proposed this fact (the tools
    whose results preceded it); empty when none, or for facts a person wrote."""
    seq: int = 0
    """Order among facts recorded at the same instant (an import's line number)."""

    def to_record(self) -> dict[str, Any]:
        """Return the JSON-ready record stored in the store and written by export."""
        return {
            "id": self.id,
            "text": self.text,
            "scope": self.scope,
            "project_key": self.project_key,
            "created": self.created.isoformat(),
            "last_verified": self.last_verified.isoformat() if self.last_verified else None,
            "source": self.source,
            "status": self.status,
            "provenance": dict(self.provenance),
            "after": list(self.after),
            "seq": self.seq,
            "schema": FACT_SCHEMA,
        }

    @property
    def quarantined(self) -> bool:
        """Whether the fact waits for a person's confirmation before any prompt may use it."""
        return self.status == "quarantined"

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], *, project_key: str = "", now: datetime | None = None
    ) -> Fact:
        """Build a fact from a stored or imported record; missing fields take defaults.

        A record without ``schema`` (written before provenance was recorded) is upgraded: a
        model fact nobody verified becomes quarantined, its ``after`` unrecorded.

        Raises:
            ValueError: The record has no text or id, or an unknown scope, source or status.
        """
        text, fact_id = record.get("text"), record.get("id")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a fact needs a non-empty 'text'")
        if not isinstance(fact_id, str) or not fact_id.strip():
            raise ValueError("a fact needs a non-empty 'id'")
        scope = record.get("scope") or ("project" if project_key else "global")
        source = record.get("source") or "import"
        status = record.get("status") or "unverified"
        if scope not in ("project", "global") or source not in SOURCES:
            raise ValueError(f"unknown scope {scope!r} or source {source!r}")
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        after = _strings(record.get("after"), "after")
        last_verified = _parse_time(record.get("last_verified"))
        if record.get("schema") is None and source == "agent" and status != "verified":
            status, after = "quarantined", after or (UNRECORDED,)
        key = "" if scope == "global" else str(record.get("project_key") or project_key)
        if scope == "project" and not key:
            raise ValueError("a project fact needs a project key")
        provenance = record.get("provenance") or {}
        if not isinstance(provenance, Mapping):
            raise ValueError("'provenance' must be an object of strings")
        created = _parse_time(record.get("created")) or now or datetime.now(UTC)
        seq = record.get("seq", 0)
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise ValueError("'seq' must be an integer")
        return cls(
            id=fact_id,
            text=text,
            scope=cast(Scope, scope),
            project_key=key,
            created=created,
            last_verified=last_verified,
            source=cast(Source, source),
            status=cast(Status, status),
            provenance={str(k): str(v) for k, v in provenance.items()},
            after=after,
            seq=seq,
        )


@dataclass(frozen=True)
class ScoredFact:
    """A fact returned by a search, with its retrieval score (higher is better)."""

    fact: Fact
    score: float


def new_fact_id() -> str:
    """Return a fresh fact id: short enough to type, unique across processes."""
    return uuid.uuid4().hex[:12]


def _strings(value: Any, name: str) -> tuple[str, ...]:
    """Return a list of strings as a tuple (None as empty).

    Raises:
        ValueError: ``value`` is not a list of strings.
    """
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name!r} must be a list of strings")
    return tuple(value)


def _parse_time(value: Any) -> datetime | None:
    """Parse an ISO 8601 time (naive times are taken as UTC)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and value.strip():
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    else:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
