"""Phase 0 selection: decay, densities per risk, conflicts, token budgets, confirmation."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.graph import count_text
from engram.graph.profile import TaskProfile, episode_weight, profile_task
from engram.graph.profile._phase0_selection import (
    DENSITY,
    RISK_BUDGETS,
    retrieval_config,
    select_experience,
)
from engram.stores.memory import Episode, Pattern, Strategy, Trigger

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def _episode(eid="ep", days=1.0, **kw) -> Episode:
    values = dict(
        id=eid,
        date=NOW - timedelta(days=days),
        task_type="refactor",
        summary="refactor broke checkout",
        outcome="failure",
        lesson="test first",
    )
    values.update(kw)
    return Episode(**values)


@pytest.mark.parametrize(
    ("days", "weight"),
    [(0, 1.0), (7, 1.0), (7.001, 0.7), (30, 0.7), (30.001, 0.4), (90, 0.4), (90.001, None)],
)
def test_decay_boundaries(days, weight):
    assert episode_weight(_episode(days=days), NOW) == weight


def test_decay_exceptions():
    old = _episode(days=400)
    assert episode_weight(old, NOW) is None
    assert episode_weight(old, NOW, referenced=True) == 1.0
    assert episode_weight(_episode(days=400, severity=1), NOW) == 0.4
    assert episode_weight(_episode(days=3, severity=1), NOW) == 1.0


def _strategies(n=6):
    return [
        Strategy(
            id=f"s{i}",
            principle=f"principle number {i}",
            applies_to=("refactor",),
            priority="high" if i % 2 else "low",
        )
        for i in range(n)
    ]


def _patterns(n=6):
    return [
        Pattern(
            id=f"p{i}",
            name=f"pattern {i}",
            trigger=Trigger(task_types=("refactor",), features=(f"f{i}",)),
            prevention="do the safe thing",
            confidence=1 + i % 5,
            last_validated=NOW,
        )
        for i in range(n)
    ]


def _profile(risk: str) -> TaskProfile:
    return TaskProfile(
        task_type="refactor",
        risk=risk,
        files_affected=8,
        files=("pay.py",),
        has_tests=False,
        production=False,
        features=tuple(f"f{i}" for i in range(6)),
    )


@pytest.mark.parametrize("risk", ["low", "medium", "high"])
def test_density_per_risk(risk):
    episodes = [_episode(f"e{i}", days=i) for i in range(6)]
    sel = select_experience(
        _profile(risk),
        strategies=_strategies(),
        patterns=_patterns(),
        episodes=episodes,
        now=NOW,
        count_tokens=words,
    )
    density = DENSITY[risk]
    kinds = [i.kind for i in sel.items]
    assert kinds.count("strategy") <= density.strategies
    assert kinds.count("pattern") <= density.patterns
    assert kinds.count("episode") <= density.episodes
    assert len(kinds) <= density.max_items
    expected_min = {"low": 2, "medium": 3, "high": 5}[risk]
    assert len(kinds) >= expected_min
    if risk == "low":
        assert set(kinds) == {"strategy"}
    if risk == "high":
        assert {"strategy", "pattern", "episode"} <= set(kinds)
    assert sel.tokens <= RISK_BUDGETS[risk]
    for item in sel.items:
        assert item.id in sel.block


def test_strategies_ranked_by_priority_and_direct_lookup_only():
    strategies = [
        *_strategies(4),
        Strategy(id="dbg", principle="bisect", applies_to=("debug",), priority="high"),
    ]
    sel = select_experience(
        _profile("low"),
        strategies=strategies,
        patterns=[],
        episodes=[],
        now=NOW,
        count_tokens=words,
    )
    ids = [i.id for i in sel.items]
    assert "dbg" not in ids
    assert ids[:2] == ["s1", "s3"]


def test_patterns_sorted_by_confidence_and_conflicts_resolved():
    shared = Trigger(task_types=("refactor",))
    a = Pattern(
        id="a",
        name="incremental",
        trigger=shared,
        confidence=4,
        last_validated=NOW - timedelta(days=50),
    )
    b = Pattern(id="b", name="copy and switch", trigger=shared, confidence=3, last_validated=NOW)
    c = Pattern(
        id="c", name="other", trigger=Trigger(has_tests=False), confidence=5, last_validated=NOW
    )
    sel = select_experience(
        _profile("medium"),
        strategies=[],
        patterns=[a, b, c],
        episodes=[],
        now=NOW,
        count_tokens=words,
    )
    assert [i.id for i in sel.items] == ["c", "b"]
    assert sel.conflicts == (("b", ("a",)),)
    assert ("pattern", "a", "conflicts with b, which wins") in sel.skipped


def test_retired_and_unmatched_patterns_not_injected():
    retired = Pattern(id="r", name="gone", trigger=Trigger(), confidence=0, status="retired")
    unmatched = Pattern(id="u", name="debug only", trigger=Trigger(task_types=("debug",)))
    sel = select_experience(
        _profile("medium"),
        strategies=[],
        patterns=[retired, unmatched],
        episodes=[],
        now=NOW,
        count_tokens=words,
    )
    assert sel.items == () and sel.block == ""


def test_episodes_failures_only_archived_out_referenced_in():
    episodes = [
        _episode("fresh", days=1),
        _episode("ok", days=1, outcome="success"),
        _episode("archived", days=120),
        _episode("kept", days=200, task_type="debug", files=("x.py",)),
        _episode("unrelated", days=1, task_type="docs"),
    ]
    pattern = Pattern(
        id="p", name="n", trigger=Trigger(task_types=("refactor",)), evidence=("kept",)
    )
    sel = select_experience(
        _profile("high"),
        strategies=[],
        patterns=[pattern],
        episodes=episodes,
        now=NOW,
        count_tokens=words,
    )
    ids = {i.id for i in sel.items if i.kind == "episode"}
    assert ids == {"fresh", "kept"}


def test_block_never_exceeds_budget_even_with_huge_items():
    huge = [
        Strategy(id=f"h{i}", principle="word " * 5000, applies_to=("refactor",)) for i in range(5)
    ]
    for budget in (30, 120, 400):
        sel = select_experience(
            _profile("low"),
            strategies=huge,
            patterns=[],
            episodes=[],
            now=NOW,
            count_tokens=words,
            budget=budget,
        )
        assert sel.tokens <= budget
        if budget < 400:
            assert any("budget" in why for _, _, why in sel.skipped)


def test_report_lists_injected_and_skipped():
    sel = select_experience(
        _profile("low"),
        strategies=_strategies(),
        patterns=[],
        episodes=[],
        now=NOW,
        count_tokens=words,
    )
    report = sel.report()
    assert [i["id"] for i in report["injected"]] == [i.id for i in sel.items]
    assert report["tokens"] == sel.tokens and report["budget"] == RISK_BUDGETS["low"]
    assert report["skipped"]


def test_retrieval_config_mirrors_constants():
    config = retrieval_config()
    assert config["risk_budgets"] == RISK_BUDGETS
    assert config["density"]["high"]["max_items"] == DENSITY["high"].max_items


def test_failure_on_related_work_found_by_shared_terms():
    related = _episode("hash", task_type="feature", summary="switched password hashing to argon2")
    unrelated = _episode("css", task_type="feature", summary="button colours off in dark mode")
    profile = profile_task("Move password hashing to bcrypt before the production release")
    assert profile.risk == "high" and "password" in profile.terms
    sel = select_experience(
        profile,
        strategies=[],
        patterns=[],
        episodes=[related, unrelated],
        now=NOW,
        count_tokens=words,
    )
    assert [i.id for i in sel.items] == ["hash"]
    assert "password" in sel.items[0].reason


def test_task_terms_cover_english_and_chinese():
    from engram.graph.profile._task_profile import task_terms

    terms = task_terms("Fix the Login timeout in 用户登录 module")
    assert {"login", "timeout", "module", "用户", "登录"} <= terms
    assert "the" not in terms and "fix" not in terms


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=600)


@settings(max_examples=80, deadline=None)
@given(
    principles=st.lists(texts.filter(str.strip), min_size=0, max_size=6),
    failures=st.lists(texts, min_size=0, max_size=6),
    risk=st.sampled_from(["low", "medium", "high"]),
    budget=st.integers(min_value=0, max_value=400),
)
def test_block_within_budget_for_any_records(principles, failures, risk, budget):
    strategies = [
        Strategy(id=f"s{i}", principle=p, applies_to=("refactor",))
        for i, p in enumerate(principles)
    ]
    patterns = [
        Pattern(id=f"p{i}", name="n", trigger=Trigger(), failure=f) for i, f in enumerate(failures)
    ]
    episodes = [_episode(f"e{i}", lesson=f) for i, f in enumerate(failures)]
    profile = _profile(risk)
    for count in (words, count_text):
        sel = select_experience(
            profile,
            strategies=strategies,
            patterns=patterns,
            episodes=episodes,
            now=NOW,
            count_tokens=count,
            budget=budget,
        )
        assert sel.tokens <= budget
        assert len(sel.items) <= DENSITY[risk].max_items
        assert (sel.block == "") == (sel.items == ())


def test_every_record_left_out_says_why():
    """Ten episodes of this very task and nothing injected: the report says why for each."""
    successes = [_episode(f"ok{i}", days=i, outcome="success") for i in range(10)]
    failures = [_episode("f1", days=2), _episode("old", days=200)]
    other = _episode("far", days=1, task_type="docs", summary="typo", lesson="spell check")
    unmatched = Pattern(
        id="pz",
        name="never here",
        trigger=Trigger(task_types=("deploy",)),
        prevention="x",
        confidence=3,
        last_validated=NOW,
    )
    retired = replace(_patterns(1)[0], id="pr", status="retired")
    elsewhere = Strategy(id="sz", principle="p", applies_to=("docs",), priority="low")
    for risk in ("low", "medium", "high"):
        sel = select_experience(
            _profile(risk),
            strategies=[elsewhere],
            patterns=[unmatched, retired],
            episodes=[*successes, *failures, other],
            now=NOW,
            count_tokens=words,
        )
        why = {item_id: reason for _, item_id, reason in sel.skipped}
        assert all(why[f"ok{i}"] == "a success: only failures are injected" for i in range(10))
        assert why["sz"] == "applies to docs, not to this task"
        assert why["pr"].startswith("retired")
        if risk == "high":
            assert "f1" not in why and "f1" in {i.id for i in sel.items}
            assert why["old"] == "archived: older than 90 days"
            assert why["far"] == "unrelated: a docs task, no shared files or terms"
            assert why["pz"] == "trigger did not match (deploy)"
        else:
            assert why["f1"] == f"episodes are injected at high risk only (this task: {risk})"
        if risk == "low":
            assert why["pz"] == "no patterns at low risk"


def test_the_left_out_list_is_bounded():
    from engram.graph.profile._phase0_selection import MAX_SKIPPED

    many = [_episode(f"ok{i}", outcome="success") for i in range(3 * MAX_SKIPPED)]
    sel = select_experience(
        _profile("high"), strategies=[], patterns=[], episodes=many, now=NOW, count_tokens=words
    )
    assert len(sel.skipped) == MAX_SKIPPED
    assert sel.skipped[-1] == ("more", "", f"{2 * MAX_SKIPPED + 1} more records left out")
