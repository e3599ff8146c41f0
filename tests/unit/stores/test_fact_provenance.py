"""Fact provenance: the record upgrade, the on-open migration (real SQLite), quarantine rules."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from langgraph.store.memory import InMemoryStore

from engram.stores.memory import Fact, FactStore, migrate_facts, render_fact_line
from engram.stores.memory._migration import schema_version
from engram.stores.memory._records import FACT_SCHEMA, UNRECORDED
from engram.stores.memory._store import fact_namespace
from engram.stores.sqlite import open_memory_store

NOW = datetime(2026, 3, 1, tzinfo=UTC)
KEY = "/srv/app"


def old_record(text: str, source: str, status: str = "unverified", **extra: object) -> dict:
    """A record as engram stored it before provenance was recorded (no schema, no after)."""
    return {
        "text": text,
        "scope": "project",
        "project_key": KEY,
        "created": NOW.isoformat(),
        "last_verified": NOW.isoformat() if status == "verified" else None,
        "source": source,
        "status": status,
        "provenance": {"via": "save_memory"},
        "seq": 0,
        **extra,
    }


def test_an_old_unverified_model_fact_is_quarantined_as_unrecorded():
    fact = Fact.from_record({**old_record("Deploy with curl | sh", "agent"), "id": "a1"})
    assert fact.quarantined and fact.after == (UNRECORDED,)
    for source, status in (("user", "verified"), ("auto", "unverified"), ("agent", "verified")):
        kept = Fact.from_record({**old_record("x y z", source, status), "id": "b"})
        assert (kept.status, kept.after) == (status, ())


def test_the_current_record_round_trips_provenance():
    fact = FactStore(InMemoryStore()).add(
        "We always use pnpm",
        scope="project",
        project_key=KEY,
        source="agent",
        now=NOW,
        status="quarantined",
        after=("read_file", "grep_code"),
    )
    record = fact.to_record()
    assert record["schema"] == FACT_SCHEMA and record["after"] == ["read_file", "grep_code"]
    assert Fact.from_record(record) == fact
    assert "by model after read_file, grep_code" in render_fact_line(fact, NOW)


def test_an_import_without_a_source_is_marked_as_imported():
    fact = Fact.from_record({"id": "i1", "text": "Use tabs", "scope": "global"})
    assert fact.source == "import" and "by import" in render_fact_line(fact, NOW)
    with pytest.raises(ValueError, match="after"):
        Fact.from_record({"id": "i2", "text": "Use tabs", "scope": "global", "after": "x"})


def test_opening_an_old_sqlite_store_migrates_it_once(tmp_path):
    namespace = fact_namespace("project", KEY)
    with open_memory_store(tmp_path) as store:
        store.put(
            namespace, "old1", old_record("We always deploy with curl | sh", "agent"), index=False
        )
        store.put(
            namespace,
            "old2",
            old_record("This project uses Java 17", "user", "verified"),
            index=False,
        )
        store.put(namespace, "junk", {"not": "a fact"}, index=False)
        store.delete(("facts_meta",), "schema")  # as a store from before the migration
        assert schema_version(store) == 1
    with open_memory_store(tmp_path) as store:
        assert schema_version(store) == FACT_SCHEMA
        stored = store.get(namespace, "old1")
        assert stored is not None and stored.value["schema"] == FACT_SCHEMA
        assert stored.value["status"] == "quarantined"
        assert store.get(namespace, "junk").value == {"not": "a fact"}
        facts = FactStore(store)
        assert [h.fact.id for h in facts.search("deploy curl java", project_key=KEY)] == ["old2"]
        assert migrate_facts(store) == 0


def test_migration_rewrites_only_old_records():
    store = InMemoryStore()
    namespace = fact_namespace("project", KEY)
    store.put(namespace, "old", old_record("Use tabs", "auto"), index=False)
    FactStore(store).add("Use spaces", scope="global", project_key="", source="user", now=NOW)
    assert migrate_facts(store) == 1
    assert store.get(namespace, "old").value["schema"] == FACT_SCHEMA
    assert migrate_facts(store) == 0


def test_a_store_that_cannot_be_migrated_still_opens_and_reads_old_facts_safely(
    tmp_path, monkeypatch
):
    import sqlite3

    import engram.stores.memory._migration as migration

    namespace = fact_namespace("project", KEY)
    with open_memory_store(tmp_path) as store:
        store.put(
            namespace, "old1", old_record("We always deploy with curl | sh", "agent"), index=False
        )

    def read_only(store):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(migration, "migrate_facts", read_only)
    with open_memory_store(tmp_path) as store:
        [fact] = FactStore(store).facts(project_key=KEY)
        assert fact.quarantined and FactStore(store).search("deploy curl", project_key=KEY) == []
