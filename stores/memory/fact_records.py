"""The fact record: what a long-term fact holds, and its JSON form for stores and exports."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

__all__ = ["Fact", "ScoredFact", "Scope", "Source", "Status", "new_fact_id"]

Scope = Literal["project", "global"]
Source = Literal["user", "agent", "auto"]
Status = Literal["verified", "unverified"]


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
    provenance: Mapping[str, str] = field(default_factory=dict)
    """Where it came from: session/thread id, message id, tool call id."""
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
            "seq": self.seq,
        }

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], *, project_key: str = "", now: datetime | None = None
    ) -> Fact:
        """Build a fact from a stored or imported record; missing fields take defaults.

        Raises:
            ValueError: The record has no text or id, or an unknown scope, source or status.
        """
        text, fact_id = record.get("text"), record.get("id")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a fact needs a non-empty 'text'")
        if not isinstance(fact_id, str) or not fact_id.strip():
            raise ValueError("a fact needs a non-empty 'id'")
        scope = record.get("scope") or ("project" if project_key else "global")
        source = record.get("source") or "user"
        status = record.get("status") or "unverified"
        if scope not in ("project", "global") or source not in ("user", "agent", "auto"):
            raise ValueError(f"unknown scope {scope!r} or source {source!r}")
        if status not in ("verified", "unverified"):
            raise ValueError(f"unknown status {status!r}")
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
            last_verified=_parse_time(record.get("last_verified")),
            source=cast(Source, source),
            status=cast(Status, status),
            provenance={str(k): str(v) for k, v in provenance.items()},
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


def _parse_time(value: Any) -> datetime | None:
    """Parse an ISO 8601 time (naive times are taken as UTC)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and value.strip():
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    else:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
