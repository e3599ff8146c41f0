"""Keep experience memory (strategies, patterns, episodes) in a LangGraph ``BaseStore``.

Namespaces are ``("experience", "strategies", <label>)``, ``("experience", "patterns", <label>)``
and ``("experience", "episodes", <label>)`` where ``<label>`` is the project key encoded by
``engram.stores.project._key.namespace_label`` or ``"global"`` (strategies only). Records are frozen
dataclasses (``engram.stores.memory._experience_records``); the pattern rules
(confidence
arithmetic, retirement, conflict resolution) are pure functions here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from langgraph.store.base import BaseStore, GetOp, Item

from engram.stores._errors import SecretRefusedError
from engram.stores._secrets import find_secret, with_article
from engram.stores.memory._experience_records import (
    Episode,
    Kind,
    Pattern,
    Record,
    Strategy,
    record_from_dict,
    record_texts,
    record_to_dict,
)
from engram.stores.project import namespace_label

ROOT = "experience"
GLOBAL_LABEL = "global"
SECTION: dict[Kind, str] = {"strategy": "strategies", "pattern": "patterns", "episode": "episodes"}
TIMESTAMP_KEY = "ts"
"""Stored next to each record: its date as epoch seconds, for range filters in any store."""
PAGE_SIZE = 1000
"""Items fetched per store search call when listing."""
PROBE_LIMIT = 20
"""Items one ``has`` query reads (a nested namespace's items are skipped, not counted)."""

CONFIDENCE_MAX = 5
"""Highest pattern confidence."""
CONFIDENCE_SUCCESS_STEP = 1
"""Confidence gained when an applied pattern helped."""
CONFIDENCE_FAILURE_STEP = 2
"""Confidence lost when an applied pattern did not help."""
CONFIDENCE_RETIRE_AT = 0
"""A pattern whose confidence falls to this or below is retired."""
CONFLICT_MARGIN = 1
"""Within this many confidence points, the more recently validated pattern wins."""


class ExperienceRepo(Protocol):
    """Where experience records live; ``ExperienceStore`` over any ``BaseStore`` implements it."""

    def put(self, record: Record) -> Record:
        """Save ``record`` (insert or replace by id) and return it."""
        ...

    def get(self, kind: Kind, record_id: str) -> Record | None:
        """Return one record, or None."""
        ...

    def find(
        self,
        kind: Kind,
        *,
        where: dict[str, Any] | None = None,
        ids: Collection[str] | None = None,
    ) -> list[Record]:
        """Return records of ``kind`` matching ``where`` (or with the given ``ids``)."""
        ...

    def delete(self, kind: Kind, record_id: str) -> bool:
        """Delete one record; return whether it existed."""
        ...


class ExperienceStore:
    """Experience records of one project (plus global strategies) in a ``BaseStore``."""

    def __init__(self, store: BaseStore, project_key: str) -> None:
        """Bind the store to a project.

        Args:
            store: Any LangGraph store (``InMemoryStore``, ``SqliteStore``, ``PostgresStore``).
            project_key: The normalized project key from ``engram.stores.project._key.project_key``.
        """
        self._store = store
        self.project_key = project_key
        self._label = namespace_label(project_key)

    def namespace(
        self, kind: Kind, scope: Literal["project", "global"] = "project"
    ) -> tuple[str, ...]:
        """Return the store namespace of ``kind`` records for this project or globally."""
        label = GLOBAL_LABEL if scope == "global" else self._label
        return (ROOT, SECTION[kind], label)

    def _namespaces(self, kind: Kind) -> list[tuple[str, ...]]:
        spaces = [self.namespace(kind)]
        if kind == "strategy":
            spaces.append(self.namespace(kind, "global"))
        return spaces

    def put(self, record: Record) -> Record:
        """Save ``record``, replacing one with the same id.

        Raises:
            SecretRefusedError: A text field looks like it holds a credential.
        """
        for text in record_texts(record):
            kind_of_secret = find_secret(text)
            if kind_of_secret:
                what = with_article(kind_of_secret)
                raise SecretRefusedError(f"refusing to store {what} in experience")
        scope: Literal["project", "global"] = "project"
        if isinstance(record, Strategy):
            scope = record.scope
            other: Literal["project", "global"] = "global" if scope == "project" else "project"
            self._store.delete(self.namespace("strategy", other), record.id)
        stored = {**record_to_dict(record), TIMESTAMP_KEY: record.created.timestamp()}
        self._store.put(self.namespace(record.kind, scope), record.id, stored)
        return record

    def get(self, kind: Kind, record_id: str) -> Record | None:
        """Return the record of ``kind`` with ``record_id``, or None."""
        for space in self._namespaces(kind):
            item = self._store.get(space, record_id)
            if item is not None:
                return record_from_dict(kind, item.value)
        return None

    def find(
        self,
        kind: Kind,
        *,
        where: dict[str, Any] | None = None,
        ids: Collection[str] | None = None,
    ) -> list[Record]:
        """Return every record of ``kind`` (strategies include global ones), oldest first.

        Args:
            kind: ``strategy``, ``pattern`` or ``episode``.
            where: Filter on stored top-level fields, applied by the store
                (e.g. ``{"outcome": "failure"}``, or ``{"ts": {"$gte": 1.7e9}}`` on the
                record's date in epoch seconds).
            ids: Fetch exactly these records in one store round trip (``where`` is ignored);
                unknown ids are skipped.
        """
        if ids is not None:
            ops = [
                GetOp(space, record_id)
                for space in self._namespaces(kind)
                for record_id in dict.fromkeys(ids)
            ]
            found = {item.key: item for item in self._store.batch(ops) if isinstance(item, Item)}
            fetched = [record_from_dict(kind, item.value) for item in found.values()]
            return sorted(fetched, key=lambda r: (r.created, r.id))
        records: list[Record] = []
        for space in self._namespaces(kind):
            offset = 0
            while True:
                items = self._store.search(space, filter=where, limit=PAGE_SIZE, offset=offset)
                records.extend(
                    record_from_dict(kind, item.value) for item in items if item.namespace == space
                )
                if len(items) < PAGE_SIZE:
                    break
                offset += PAGE_SIZE
        return sorted(records, key=lambda r: (r.created, r.id))

    def has(self, kind: Kind, *, where: dict[str, Any] | None = None) -> bool:
        """Tell whether any record of ``kind`` matches ``where`` (one small store query)."""
        return any(
            item.namespace == space
            for space in self._namespaces(kind)
            for item in self._store.search(space, filter=where, limit=PROBE_LIMIT)
        )

    def delete(self, kind: Kind, record_id: str) -> bool:
        """Delete the record of ``kind`` with ``record_id``; return whether it existed."""
        for space in self._namespaces(kind):
            if self._store.get(space, record_id) is not None:
                self._store.delete(space, record_id)
                return True
        return False


def apply_outcome(pattern: Pattern, *, success: bool, now: datetime) -> Pattern:
    """Return ``pattern`` after it was applied: +1 on success (max 5), −2 on failure.

    A failure marks the pattern "needs re-analysis"; confidence at or below zero retires it.
    A success validates it (``last_validated = now``) and clears the re-analysis mark.
    """
    if success:
        return dataclasses.replace(
            pattern,
            confidence=min(CONFIDENCE_MAX, pattern.confidence + CONFIDENCE_SUCCESS_STEP),
            last_validated=now,
            needs_reanalysis=False,
        )
    confidence = pattern.confidence - CONFIDENCE_FAILURE_STEP
    return dataclasses.replace(
        pattern,
        confidence=confidence,
        needs_reanalysis=True,
        status="retired" if confidence <= CONFIDENCE_RETIRE_AT else pattern.status,
    )


def record_verdict(
    repo: ExperienceRepo,
    episode_id: str,
    outcome: Literal["success", "failure"],
    *,
    now: datetime,
) -> tuple[Episode, list[Pattern]]:
    """Apply a late verdict (``/good``, ``/bad``) to a recorded episode.

    The episode gets the outcome and is marked confirmed; the patterns it applied change
    confidence once: an episode that was already confirmed keeps its patterns untouched.

    Raises:
        LookupError: No episode has ``episode_id``.
    """
    episode = repo.get("episode", episode_id)
    if not isinstance(episode, Episode):
        raise LookupError(f"no episode {episode_id}")
    updated: list[Pattern] = []
    if not episode.confirmed:
        for pattern_id in episode.patterns_applied:
            pattern = repo.get("pattern", pattern_id)
            if isinstance(pattern, Pattern):
                updated.append(apply_outcome(pattern, success=outcome == "success", now=now))
                repo.put(updated[-1])
    episode = dataclasses.replace(episode, outcome=outcome, confirmed=True)
    repo.put(episode)
    return episode, updated


def pick_winner(patterns: Sequence[Pattern]) -> Pattern:
    """Choose among patterns that conflict on one trigger.

    Higher confidence wins; when the best two are within ``CONFLICT_MARGIN`` points the more
    recently validated one wins; remaining ties go to higher confidence, then the smaller id.

    Raises:
        ValueError: ``patterns`` is empty.
    """
    if not patterns:
        raise ValueError("no patterns to choose from")
    ranked = sorted(patterns, key=lambda p: (-p.confidence, p.id))
    top = ranked[0]
    close = [p for p in ranked if top.confidence - p.confidence <= CONFLICT_MARGIN]
    return max(close, key=lambda p: (p.last_validated, p.confidence, _reverse_id(p.id)))


def _reverse_id(record_id: str) -> tuple[int, ...]:
    # max() must prefer the smaller id on a full tie.
    return tuple(-ord(c) for c in record_id)


def same_trigger_groups(patterns: Iterable[Pattern]) -> list[list[Pattern]]:
    """Group active patterns by identical trigger, keeping first-seen group order."""
    groups: dict[tuple[Any, ...], list[Pattern]] = {}
    for pattern in patterns:
        if pattern.status == "active" and not pattern.superseded_by:
            groups.setdefault(pattern.trigger.key(), []).append(pattern)
    return list(groups.values())
