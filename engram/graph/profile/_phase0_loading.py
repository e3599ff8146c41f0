"""Run Phase 0 against the stores: profile the task, load candidates, select, recall facts.

Shared by the ``retrieve_memory`` node and ``engram profile``. Synchronous (store reads
block); the node runs it off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from langgraph.store.base import BaseStore

from engram.graph._context import Context
from engram.graph._state_values import MemoryReport
from engram.graph.profile._phase0_selection import (
    SEVERE,
    Selection,
    archive_cutoff,
    pattern_matches,
    select_experience,
)
from engram.graph.profile._task_profile import TaskProfile, profile_task
from engram.stores import StoreError
from engram.stores.memory import (
    TIMESTAMP_KEY,
    Episode,
    ExperienceStore,
    FactRecall,
    Pattern,
    Strategy,
    recall_facts,
)
from engram.stores.project import memory_key, project_has_tests

NO_STORE_NOTE = "no memory store is configured: Phase 0 ran without experience or facts"


class FactsRecaller(Protocol):
    """The facts-memory recall function (``engram.stores.memory._recall.recall_facts``)."""

    def __call__(
        self,
        store: BaseStore,
        query: str,
        *,
        project_key: str,
        window: int,
        count_tokens: Callable[[str], int],
        now: datetime,
    ) -> FactRecall:
        """Return the facts block for ``query``."""
        ...


@dataclass(frozen=True)
class Experience:
    """Candidate experience loaded for one task."""

    strategies: list[Strategy] = field(default_factory=list)
    patterns: list[Pattern] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    left_out: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, "", why) for records the loader did not read, as the selection's ``skipped``."""


@dataclass(frozen=True)
class Phase0Result:
    """Everything Phase 0 decided for one task."""

    profile: TaskProfile
    selection: Selection
    facts: FactRecall | None
    notes: tuple[str, ...]

    @property
    def block(self) -> str:
        """Return the memory block: facts first, then experience."""
        parts = [self.facts.block if self.facts else "", self.selection.block]
        return "\n\n".join(p for p in parts if p)

    def report(self, count_tokens: Callable[[str], int]) -> MemoryReport:
        """Return what was injected and why, JSON-ready (``memory_report`` in state)."""
        block = self.block
        return {
            "risk": self.profile.risk,
            "reasons": list(self.profile.reasons),
            "experience": self.selection.report(),
            "facts": {
                "ids": [f.fact.id for f in self.facts.facts] if self.facts else [],
                "tokens": self.facts.tokens if self.facts else 0,
            },
            "tokens": count_tokens(block) if block else 0,
        }


def load_experience(repo: ExperienceStore, profile: TaskProfile, now: datetime) -> Experience:
    """Load the candidates Phase 0 needs for ``profile``.

    Failure episodes are read only for high-risk tasks, and the store filters out archived
    ones; severity-1 episodes and those referenced by a matching pattern are added back.
    """
    strategies = [r for r in repo.find("strategy") if isinstance(r, Strategy)]
    patterns = [
        r for r in repo.find("pattern", where={"status": "active"}) if isinstance(r, Pattern)
    ]
    cutoff = archive_cutoff(now).timestamp()
    left_out = _episodes_left_out(repo, profile, cutoff)
    if profile.risk != "high":
        return Experience(strategies, patterns, [], left_out)
    found: dict[str, Episode] = {}
    for where in (
        {"outcome": "failure", TIMESTAMP_KEY: {"$gte": cutoff}},
        {"outcome": "failure", "severity": SEVERE},
    ):
        found.update((r.id, r) for r in repo.find("episode", where=where) if isinstance(r, Episode))
    referenced = {
        episode_id
        for pattern in patterns
        if pattern_matches(profile, pattern)
        for episode_id in pattern.evidence
    } - found.keys()
    if referenced:
        found.update(
            (r.id, r)
            for r in repo.find("episode", ids=referenced)
            if isinstance(r, Episode) and r.outcome == "failure"
        )
    episodes = sorted(found.values(), key=lambda e: e.date)
    return Experience(strategies, patterns, episodes, left_out)


def _episodes_left_out(
    repo: ExperienceStore, profile: TaskProfile, cutoff: float
) -> list[tuple[str, str, str]]:
    """Say which of the project's episodes the loader does not read for ``profile``, and why."""
    reasons = []
    if profile.risk != "high" and repo.has("episode", where={"outcome": "failure"}):
        reasons.append(
            ("episode", "", f"failures are injected at high risk only (this task: {profile.risk})")
        )
    for outcome in ("success", "unknown"):
        if repo.has("episode", where={"outcome": outcome}):
            label = "successes" if outcome == "success" else "episodes of unknown outcome"
            reasons.append(("episode", "", f"{label}: only failures are injected"))
    old_failures = {"outcome": "failure", TIMESTAMP_KEY: {"$lt": cutoff}}
    if profile.risk == "high" and repo.has("episode", where=old_failures):
        reasons.append(("episode", "", "failures older than 90 days are archived"))
    return reasons


def run_phase0(
    store: BaseStore | None,
    task: str,
    context: Context,
    *,
    count_tokens: Callable[[str], int],
    now: datetime,
    recall: FactsRecaller | None = recall_facts,
    located_files: Sequence[str] = (),
) -> Phase0Result:
    """Profile ``task``, select experience within the risk budget and recall facts.

    Args:
        store: The memory store; None degrades to a profile only, with a note.
        task: The user's request.
        context: Run settings (project root, context window).
        count_tokens: Token counter for budgets.
        now: Current time (episode decay, fact staleness).
        recall: Facts recall function; None skips facts.
        located_files: Files already located for the task, counted toward its scope.
    """
    notes: list[str] = []
    profile = profile_task(
        task, located_files=located_files, project_has_tests=project_has_tests(context.project_path)
    )
    key = memory_key(context.project_path, context.home_path)
    experience = Experience()
    facts: FactRecall | None = None
    if store is None:
        notes.append(NO_STORE_NOTE)
    else:
        try:
            experience = load_experience(ExperienceStore(store, key), profile, now)
        except (StoreError, ValueError) as exc:
            notes.append(f"experience memory unreadable, skipped: {exc}")
        if recall is not None:
            try:
                facts = recall(
                    store,
                    task,
                    project_key=key,
                    window=context.context_window,
                    count_tokens=count_tokens,
                    now=now,
                )
            except StoreError as exc:
                notes.append(f"facts memory unavailable, skipped: {exc}")
    selection = select_experience(
        profile,
        strategies=experience.strategies,
        patterns=experience.patterns,
        episodes=experience.episodes,
        now=now,
        count_tokens=count_tokens,
    )
    if experience.left_out:
        selection = replace(selection, skipped=(*selection.skipped, *experience.left_out))
    return Phase0Result(profile, selection, facts, tuple(notes))
