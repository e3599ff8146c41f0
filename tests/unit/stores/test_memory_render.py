"""Memory block: reminder, stale marks with a frozen clock, token cap; recall end to end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.memory import InMemoryStore

from engram.stores.memory import Fact, FactStore, recall_facts
from engram.stores.memory._block import (
    MEMORY_REMINDER,
    is_stale,
    memory_cap,
    render_facts_block,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def make(fact_id: str, text: str, *, created_days_ago: int, verified_days_ago: int | None):
    return Fact(
        id=fact_id,
        text=text,
        scope="project",
        project_key="/p",
        created=NOW - timedelta(days=created_days_ago),
        last_verified=None
        if verified_days_ago is None
        else NOW - timedelta(days=verified_days_ago),
        source="user",
        status="unverified" if verified_days_ago is None else "verified",
    )


@pytest.mark.parametrize(
    ("window", "cap"),
    [
        (8_000, 500),
        (100_000, 500),
        (128_000, 640),
        (200_000, 1000),
        (1_000_000, 5000),
        (2_000_000, 5000),
    ],
)
def test_memory_cap(window, cap):
    assert memory_cap(window) == cap


def test_staleness_uses_last_verified_else_created():
    assert not is_stale(make("a", "x", created_days_ago=100, verified_days_ago=30), NOW)
    assert is_stale(make("a", "x", created_days_ago=100, verified_days_ago=31), NOW)
    assert is_stale(make("a", "x", created_days_ago=31, verified_days_ago=None), NOW)
    assert not is_stale(make("a", "x", created_days_ago=29, verified_days_ago=None), NOW)


def test_block_has_reminder_and_marks_stale_facts():
    fresh = make("f1", "Use Java 21", created_days_ago=5, verified_days_ago=2)
    old = make("f2", "Deploy with Helm", created_days_ago=90, verified_days_ago=45)
    block, kept = render_facts_block([fresh, old], now=NOW, cap_tokens=500, count_tokens=words)
    assert block.index(MEMORY_REMINDER) < block.index("Use Java 21")
    assert "clues, not facts" in block
    fresh_line = next(line for line in block.splitlines() if "[f1]" in line)
    old_line = next(line for line in block.splitlines() if "[f2]" in line)
    assert "possibly stale" not in fresh_line
    assert "possibly stale" in old_line
    assert kept == [fresh, old]


def test_block_is_cut_at_the_cap_keeping_best_first():
    facts = [
        make(f"f{i}", f"fact number {i} " + "word " * 20, created_days_ago=1, verified_days_ago=1)
        for i in range(10)
    ]
    block, kept = render_facts_block(facts, now=NOW, cap_tokens=100, count_tokens=words)
    assert words(block) <= 100
    assert kept == facts[: len(kept)] and 0 < len(kept) < 10


def test_nothing_fits_gives_empty_block():
    facts = [make("f", "word " * 50, created_days_ago=1, verified_days_ago=1)]
    assert render_facts_block(facts, now=NOW, cap_tokens=30, count_tokens=words) == ("", [])


def test_recall_facts_end_to_end():
    store = InMemoryStore()
    memory = FactStore(store)
    memory.add(
        "This project uses Java 17",
        scope="project",
        project_key="/p",
        source="user",
        now=NOW - timedelta(days=60),
    )
    memory.add(
        "Use Python everywhere", scope="project", project_key="/other", source="user", now=NOW
    )
    recall = recall_facts(
        store,
        "upgrade the java version",
        project_key="/p",
        window=128_000,
        count_tokens=words,
        now=NOW,
    )
    assert [h.fact.text for h in recall.facts] == ["This project uses Java 17"]
    assert "possibly stale" in recall.block and recall.tokens == words(recall.block)
    empty = recall_facts(
        store, "unrelated question", project_key="/p", window=128_000, count_tokens=words, now=NOW
    )
    assert empty.block == "" and empty.facts == () and empty.tokens == 0
