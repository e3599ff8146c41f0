"""Loading Phase 0 candidates from real stores: archived episodes stay out unless excepted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.memory import InMemoryStore

from engram.graph.profile import TaskProfile
from engram.graph.profile._phase0_loading import load_experience
from engram.stores.memory import Episode, ExperienceStore, Pattern, Trigger
from engram.stores.sqlite import open_memory_store

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite"])
def repo(request, tmp_path):
    if request.param == "memory":
        yield ExperienceStore(InMemoryStore(), "/p")
    else:
        with open_memory_store(tmp_path) as store:
            yield ExperienceStore(store, "/p")


def _profile(risk: str) -> TaskProfile:
    return TaskProfile(task_type="refactor", risk=risk, files_affected=1)


def _episode(eid: str, days: float, **kw) -> Episode:
    values = dict(
        id=eid,
        date=NOW - timedelta(days=days),
        task_type="refactor",
        summary="s",
        outcome="failure",
    )
    values.update(kw)
    return Episode(**values)


def test_high_risk_loads_recent_severe_and_referenced_failures(repo):
    for episode in (
        _episode("recent", 10),
        _episode("edge", 90),
        _episode("old", 91),
        _episode("old-severe", 300, severity=1),
        _episode("old-ref", 300),
        _episode("ok", 1, outcome="success"),
        _episode("old-ref-other", 300),
    ):
        repo.put(episode)
    repo.put(
        Pattern(
            id="p",
            name="n",
            trigger=Trigger(task_types=("refactor",)),
            evidence=("old-ref", "missing"),
        )
    )
    repo.put(
        Pattern(
            id="q", name="n", trigger=Trigger(task_types=("debug",)), evidence=("old-ref-other",)
        )
    )
    loaded = load_experience(repo, _profile("high"), NOW)
    assert {e.id for e in loaded.episodes} == {"recent", "edge", "old-severe", "old-ref"}
    assert {p.id for p in loaded.patterns} == {"p", "q"}


def test_lower_risk_reads_no_episodes(repo):
    repo.put(_episode("recent", 1))
    repo.put(Pattern(id="r", name="n", trigger=Trigger(), status="retired", confidence=0))
    loaded = load_experience(repo, _profile("medium"), NOW)
    assert loaded.episodes == [] and loaded.patterns == []
