"""Node ``retrieve_memory`` (Phase 0): profile the task and inject experience and facts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from graph.budget import count_text
from graph.context import Context
from graph.deps import Deps
from graph.phase0 import Selection, select_experience
from graph.profile import TaskProfile, profile_task
from graph.state import State
from stores.errors import StoreError
from stores.experience import ExperienceStore
from stores.experience_records import Episode, Pattern, Strategy
from stores.fact_recall import FactRecall, recall_facts
from stores.project_key import project_key
from stores.project_tests import project_has_tests

__all__ = ["FactsRecaller", "load_experience", "phase0", "retrieve_memory"]

NO_STORE_NOTE = "no memory store is configured: Phase 0 ran without experience or facts"


class FactsRecaller(Protocol):
    """The facts-memory recall function (``stores.fact_recall.recall_facts``)."""

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

    strategies: list[Strategy]
    patterns: list[Pattern]
    episodes: list[Episode]


def load_experience(repo: ExperienceStore, profile: TaskProfile) -> Experience:
    """Load the candidates Phase 0 needs: failure episodes only for high-risk tasks."""
    strategies = [r for r in repo.find("strategy") if isinstance(r, Strategy)]
    patterns = [r for r in repo.find("pattern", where={"status": "active"})
                if isinstance(r, Pattern)]
    episodes: list[Episode] = []
    if profile.risk == "high":
        episodes = [r for r in repo.find("episode", where={"outcome": "failure"})
                    if isinstance(r, Episode)]
    return Experience(strategies, patterns, episodes)


def phase0(
    store: BaseStore | None,
    task: str,
    context: Context,
    *,
    count_tokens: Callable[[str], int],
    now: datetime,
    recall: FactsRecaller | None = recall_facts,
    located_files: Sequence[str] = (),
) -> tuple[TaskProfile, Selection, FactRecall | None, list[str]]:
    """Run Phase 0 synchronously: profile, select experience, recall facts.

    Shared by the node and ``engram profile``. Returns the profile, the experience
    selection, the facts recall (None when skipped) and notes about degradations.
    """
    notes: list[str] = []
    profile = profile_task(task, located_files=located_files,
                           project_has_tests=project_has_tests(context.project_path))
    key = project_key(context.project_path)
    experience = Experience([], [], [])
    facts: FactRecall | None = None
    if store is None:
        notes.append(NO_STORE_NOTE)
    else:
        try:
            experience = load_experience(ExperienceStore(store, key), profile)
        except (StoreError, ValueError) as exc:
            notes.append(f"experience memory unreadable, skipped: {exc}")
        if recall is not None:
            try:
                facts = recall(store, task, project_key=key, window=context.context_window,
                               count_tokens=count_tokens, now=now)
            except StoreError as exc:
                notes.append(f"facts memory unavailable, skipped: {exc}")
    selection = select_experience(profile, strategies=experience.strategies,
                                  patterns=experience.patterns, episodes=experience.episodes,
                                  now=now, count_tokens=count_tokens)
    return profile, selection, facts, notes


def _task_text(state: State) -> str:
    if state.task:
        return state.task
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            return message.content
    return ""


async def retrieve_memory(
    state: State,
    runtime: Runtime[Context],
    *,
    deps: Deps,
    recall: FactsRecaller | None = recall_facts,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dict[str, Any]:
    """Profile the task, then write the memory block and an account of what went into it.

    Args:
        state: Graph state; reads ``task`` (or the last user message).
        runtime: Run settings and the injected store.
        deps: Live handles; ``deps.store`` is used when the runtime has no store.
        recall: Facts recall function; None skips facts.
        clock: Current time (frozen in tests).
    """
    context = runtime.context
    store = runtime.store if runtime.store is not None else deps.store
    count = deps.count_tokens or count_text
    task = _task_text(state)
    # Store reads are blocking; run them off the event loop (server stores forbid sync
    # calls on the loop thread).
    profile, selection, facts, notes = await asyncio.to_thread(
        phase0, store, task, context, count_tokens=count, now=clock(), recall=recall
    )
    blocks = [b for b in ((facts.block if facts else ""), selection.block) if b]
    memory_block = "\n\n".join(blocks)
    report = {
        "risk": profile.risk,
        "reasons": list(profile.reasons),
        "experience": selection.report(),
        "facts": {
            "ids": [f.fact.id for f in facts.facts] if facts else [],
            "tokens": facts.tokens if facts else 0,
        },
        "tokens": count(memory_block) if memory_block else 0,
    }
    approval: dict[str, Any] = {}
    if profile.risk == "high" and context.auto_approve:
        approval = {"action": "approve", "approved": True, "constraints": "", "auto": True}
    return {
        "task": task,
        "task_profile": profile.to_dict(),
        "memory_block": memory_block,
        "memory_report": report,
        "approval": approval,
        "notes": notes,
    }
