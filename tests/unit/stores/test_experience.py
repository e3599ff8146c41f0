"""Contract tests of ExperienceStore over InMemoryStore and SqliteStore, and pattern rules."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from engram.stores import SecretRefusedError
from engram.stores.memory import (
    Episode,
    ExperienceStore,
    Pattern,
    Strategy,
    Trigger,
    apply_outcome,
    pick_winner,
    record_to_dict,
    same_trigger_groups,
)
from engram.stores.memory._experience_records import record_from_dict
from engram.stores.memory._experience_store import CONFIDENCE_MAX
from engram.stores.sqlite import open_memory_store

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)
KEY = "/home/dev/shop.v2"


@pytest.fixture(params=["memory", "sqlite"])
def base_store(request, tmp_path) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
    else:
        with open_memory_store(tmp_path) as store:
            yield store


def _pattern(pid: str = "pat-1", **kw) -> Pattern:
    values = dict(
        id=pid,
        name="Refactor without tests",
        trigger=Trigger(task_types=("refactor",), min_files=6, has_tests=False),
        failure="new bugs after refactor",
        root_cause="no baseline",
        prevention="run the suite first",
        confidence=3,
        last_validated=NOW,
        created=NOW,
    )
    values.update(kw)
    return Pattern(**values)


def _episode(eid: str = "ep-1", **kw) -> Episode:
    values = dict(
        id=eid,
        date=NOW,
        task_type="refactor",
        summary="split the payment module",
        outcome="failure",
        files=("pay.py",),
        lesson="write tests first",
    )
    values.update(kw)
    return Episode(**values)


def test_put_get_round_trip_every_kind(base_store):
    repo = ExperienceStore(base_store, KEY)
    records = [
        Strategy(
            id="st-1",
            principle="Draw the dependency graph first",
            applies_to=("refactor", "multi-file"),
            priority="high",
            created=NOW,
        ),
        _pattern(evidence=("ep-1",), conflicts_with=("pat-9",)),
        _episode(patterns_applied=("pat-1",), severity=1),
    ]
    for record in records:
        repo.put(record)
        assert repo.get(record.kind, record.id) == record


def test_find_filters_and_separates_projects(base_store):
    mine, other = ExperienceStore(base_store, KEY), ExperienceStore(base_store, "/elsewhere")
    mine.put(_episode("ep-1", outcome="failure"))
    mine.put(_episode("ep-2", outcome="success", date=NOW + timedelta(seconds=1)))
    other.put(_episode("ep-3"))
    assert [e.id for e in mine.find("episode")] == ["ep-1", "ep-2"]
    assert [e.id for e in mine.find("episode", where={"outcome": "failure"})] == ["ep-1"]
    assert [e.id for e in other.find("episode")] == ["ep-3"]


def test_global_strategies_visible_from_every_project(base_store):
    a, b = ExperienceStore(base_store, KEY), ExperienceStore(base_store, "/other")
    a.put(
        Strategy(
            id="g-1",
            principle="Prepare a rollback plan",
            applies_to=("production",),
            scope="global",
        )
    )
    a.put(Strategy(id="p-1", principle="Project only", applies_to=("debug",)))
    assert {s.id for s in b.find("strategy")} == {"g-1"}
    assert {s.id for s in a.find("strategy")} == {"g-1", "p-1"}
    # Moving a strategy between scopes leaves one copy.
    a.put(Strategy(id="p-1", principle="Project only", applies_to=("debug",), scope="global"))
    assert [s.id for s in a.find("strategy")].count("p-1") == 1
    assert "p-1" in {s.id for s in b.find("strategy")}


def test_delete(base_store):
    repo = ExperienceStore(base_store, KEY)
    repo.put(_pattern())
    assert repo.delete("pattern", "pat-1") is True
    assert repo.get("pattern", "pat-1") is None
    assert repo.delete("pattern", "pat-1") is False


def test_listing_pages_past_one_search_page(base_store, monkeypatch):
    monkeypatch.setattr("engram.stores.memory._experience_store.PAGE_SIZE", 3)
    repo = ExperienceStore(base_store, KEY)
    for n in range(8):
        repo.put(_episode(f"ep-{n}", date=NOW + timedelta(minutes=n)))
    assert [e.id for e in repo.find("episode")] == [f"ep-{n}" for n in range(8)]


def test_secrets_are_refused(base_store):
    repo = ExperienceStore(base_store, KEY)
    with pytest.raises(SecretRefusedError):
        repo.put(_episode(lesson="use api_key=sk-proj-abcdefghijklmnopqrstuvwxyz123456"))
    assert repo.find("episode") == []


def test_invalid_records_rejected():
    with pytest.raises(ValueError):
        _pattern(confidence=7)
    with pytest.raises(ValueError):
        _episode(outcome="maybe")
    with pytest.raises(ValueError):
        _episode(eid="../escape")
    with pytest.raises(ValueError):
        Strategy(id="s", principle="  ", applies_to=())


def test_json_form_is_an_exact_inverse():
    for record in (_pattern(evidence=("a", "b")), _episode(files=("x.py", "y.py"))):
        assert record_from_dict(record.kind, record_to_dict(record)) == record


@pytest.mark.parametrize(
    ("start", "success", "confidence", "status", "reanalysis"),
    [
        (3, True, 4, "active", False),
        (5, True, CONFIDENCE_MAX, "active", False),
        (3, False, 1, "active", True),
        (2, False, 0, "retired", True),
        (1, False, -1, "retired", True),
    ],
)
def test_confidence_arithmetic_and_retirement(start, success, confidence, status, reanalysis):
    before = _pattern(confidence=start, last_validated=NOW - timedelta(days=3))
    after = apply_outcome(before, success=success, now=NOW)
    assert (after.confidence, after.status, after.needs_reanalysis) == (
        confidence,
        status,
        reanalysis,
    )
    assert after.last_validated == (NOW if success else before.last_validated)


def test_success_clears_reanalysis_mark():
    flagged = _pattern(needs_reanalysis=True)
    assert apply_outcome(flagged, success=True, now=NOW).needs_reanalysis is False


def test_conflict_higher_confidence_wins_beyond_margin():
    old_strong = _pattern("a", confidence=5, last_validated=NOW - timedelta(days=60))
    new_weak = _pattern("b", confidence=3, last_validated=NOW)
    assert pick_winner([new_weak, old_strong]).id == "a"


def test_conflict_within_one_point_more_recent_wins():
    old = _pattern("a", confidence=4, last_validated=NOW - timedelta(days=60))
    recent = _pattern("b", confidence=3, last_validated=NOW)
    assert pick_winner([old, recent]).id == "b"
    # A full tie goes to higher confidence, then the smaller id.
    same = _pattern("c", confidence=3, last_validated=NOW)
    assert pick_winner([same, recent]).id == "b"
    with pytest.raises(ValueError):
        pick_winner([])


def test_same_trigger_groups_ignore_retired_and_superseded():
    a, b = _pattern("a"), _pattern("b")
    retired = _pattern("c", status="retired")
    superseded = _pattern("d", superseded_by="a")
    other = _pattern("e", trigger=Trigger(task_types=("debug",)))
    groups = same_trigger_groups([a, b, retired, superseded, other])
    assert [[p.id for p in g] for g in groups] == [["a", "b"], ["e"]]


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        (dict(task_type="refactor", files_affected=8, has_tests=False, production=False), True),
        (dict(task_type="refactor", files_affected=8, has_tests=None, production=False), True),
        (dict(task_type="refactor", files_affected=5, has_tests=False, production=False), False),
        (dict(task_type="refactor", files_affected=8, has_tests=True, production=False), False),
        (dict(task_type="debug", files_affected=8, has_tests=False, production=False), False),
    ],
)
def test_trigger_matching(features, expected):
    trigger = Trigger(task_types=("refactor",), min_files=6, has_tests=False)
    assert trigger.matches(**features) is expected


def test_trigger_feature_tags_and_production():
    trigger = Trigger(production=True, features=("auth",))
    base = dict(task_type="feature", files_affected=1, has_tests=None)
    assert trigger.matches(**base, production=True, features=("auth", "schema"))
    assert not trigger.matches(**base, production=True, features=("schema",))
    assert not trigger.matches(**base, production=False, features=("auth",))
    assert Trigger().matches(**base, production=False)


def test_find_by_ids_in_one_round_trip(base_store):
    repo = ExperienceStore(base_store, KEY)
    for n in range(4):
        repo.put(_episode(f"ep-{n}", date=NOW + timedelta(minutes=n)))
    found = repo.find("episode", ids=["ep-3", "ep-1", "ep-missing", "ep-1"])
    assert [e.id for e in found] == ["ep-1", "ep-3"]
    assert repo.find("episode", ids=[]) == []


def test_late_verdict_changes_confidence_once(base_store):
    from engram.stores.memory import record_verdict

    repo = ExperienceStore(base_store, KEY)
    repo.put(_pattern("p1", confidence=3))
    repo.put(_episode("ep-9", outcome="unknown", patterns_applied=("p1", "gone")))
    episode, patterns = record_verdict(repo, "ep-9", "success", now=NOW)
    assert episode.outcome == "success" and episode.confirmed
    assert [p.confidence for p in patterns] == [4]
    # A second verdict corrects the episode but does not count the patterns twice.
    episode, patterns = record_verdict(repo, "ep-9", "failure", now=NOW)
    assert episode.outcome == "failure" and patterns == []
    assert repo.get("pattern", "p1").confidence == 4
    with pytest.raises(LookupError):
        record_verdict(repo, "ep-none", "success", now=NOW)
