"""Contract suite for the facts memory, run against InMemoryStore and SqliteStore."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from engram.stores import SecretRefusedError, StoreError, find_secret
from engram.stores._errors import ConflictError
from engram.stores.memory import (
    Fact,
    FactConflictError,
    FactStore,
    all_facts,
    delete_fact,
    export_jsonl,
    import_jsonl,
    replace_fact,
    verify_fact,
)
from engram.stores.memory._admin import FactNotFoundError, facts_markdown
from engram.stores.memory._store import fact_namespace
from engram.stores.sqlite import sqlite_connect
from tests.unit.stores.test_fact_search import CONTEXT_TEXTS

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ALPHA = "/srv/alpha.project"
BETA = "/srv/beta"


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield InMemoryStore()
        return
    conn = sqlite_connect(tmp_path / "memory.sqlite")
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    yield sqlite_store
    conn.close()


def test_add_returns_full_record_and_get_finds_it(store):
    facts = FactStore(store)
    fact = facts.add(
        "This project uses Java 17",
        scope="project",
        project_key=ALPHA,
        source="user",
        provenance={"thread": "t1", "message": "m1"},
        now=NOW,
    )
    assert fact.scope == "project" and fact.project_key == ALPHA
    assert fact.source == "user" and fact.status == "verified"
    assert fact.created == NOW and fact.last_verified == NOW
    assert fact.provenance == {"thread": "t1", "message": "m1"}
    again = FactStore(store).get(fact.id, project_key=ALPHA)
    assert again == fact


def test_project_facts_are_invisible_from_other_projects_global_visible_everywhere(store):
    facts = FactStore(store)
    java = facts.add(
        "This project uses Java 17", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    tabs = facts.add(
        "I prefer tabs for indentation", scope="global", project_key=ALPHA, source="user", now=NOW
    )
    assert tabs.project_key == ""
    assert {f.id for f in facts.facts(project_key=ALPHA)} == {java.id, tabs.id}
    assert [f.id for f in facts.facts(project_key=BETA)] == [tabs.id]
    assert facts.search("java version", project_key=BETA) == []
    assert facts.get(java.id, project_key=BETA) is None
    hits = facts.search("which java does this project use", project_key=ALPHA)
    assert hits and hits[0].fact.id == java.id


def test_search_ranks_relevant_fact_first_and_limits_k(store):
    facts = FactStore(store)
    texts = [f"Service number {i} is deployed on host h{i}" for i in range(15)]
    texts += ["The database is PostgreSQL with pgvector", "Reply to me in Chinese"]
    for text in texts:
        facts.add(text, scope="project", project_key=ALPHA, source="user", force=True, now=NOW)
    hits = facts.search("what database do we use postgresql", project_key=ALPHA, k=3)
    assert hits[0].fact.text == "The database is PostgreSQL with pgvector"
    assert len(facts.search("service deployed host", project_key=ALPHA, k=10)) == 10
    assert all(h.score > 0 for h in hits)


def test_conflict_blocks_write_and_lists_existing_fact(store):
    facts = FactStore(store)
    old = facts.add(
        "This project uses Java 17", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    with pytest.raises(ConflictError) as info:
        facts.add(
            "This project uses Java 21", scope="project", project_key=ALPHA, source="user", now=NOW
        )
    assert isinstance(info.value, FactConflictError)
    assert [f.id for f in info.value.conflicts] == [old.id]
    assert "Java 17" in str(info.value) and "Java 21" in str(info.value)
    assert "/memory replace" in info.value.hint and "--force" in info.value.hint
    assert len(facts.facts(project_key=ALPHA)) == 1


def test_conflicts_are_checked_within_the_same_scope_only(store):
    facts = FactStore(store)
    facts.add(
        "This project uses Java 17", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    facts.add(
        "This project uses Java 21", scope="project", project_key=BETA, source="user", now=NOW
    )
    facts.add(
        "This project uses Java 11", scope="global", project_key=ALPHA, source="user", now=NOW
    )
    assert len(facts.facts(project_key=ALPHA)) == 2


def test_force_keeps_both(store):
    facts = FactStore(store)
    facts.add("Use Node 18", scope="project", project_key=ALPHA, source="user", now=NOW)
    facts.add("Use Node 20", scope="project", project_key=ALPHA, source="user", force=True, now=NOW)
    assert sorted(f.text for f in facts.facts(project_key=ALPHA)) == ["Use Node 18", "Use Node 20"]


def test_secret_is_refused_even_with_force(store):
    facts = FactStore(store)
    with pytest.raises(SecretRefusedError, match="it contains an OpenAI API key$"):
        facts.add(
            "my openai key is sk-proj-abcdefghijklmnopqrstuvwxyz123456",
            scope="global",
            project_key=ALPHA,
            source="user",
            force=True,
            now=NOW,
        )
    assert facts.facts(project_key=ALPHA) == []


def test_writes_by_another_instance_are_seen_by_a_cached_one(store):
    reader = FactStore(store)
    assert reader.search("kafka", project_key=ALPHA) == []
    writer = FactStore(store)
    fact = writer.add(
        "Events go through Kafka", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    assert [h.fact.id for h in reader.search("kafka", project_key=ALPHA)] == [fact.id]
    delete_fact(store, fact.id, project_key=ALPHA)
    assert reader.search("kafka", project_key=ALPHA) == []
    # The deleted fact no longer blocks a rewrite, and the other instance sees the new one.
    reader.add(
        "Events go through Kafka", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    with pytest.raises(ConflictError):
        writer.add(
            "events go through kafka.", scope="project", project_key=ALPHA, source="user", now=NOW
        )


def test_verify_and_replace_keep_id(store):
    facts = FactStore(store)
    fact = facts.add(
        "CI runs on GitHub Actions", scope="project", project_key=ALPHA, source="auto", now=NOW
    )
    assert fact.status == "unverified" and fact.last_verified is None
    later = NOW + timedelta(days=40)
    verified = verify_fact(store, fact.id, project_key=ALPHA, now=later)
    assert verified.status == "verified" and verified.last_verified == later
    replaced = replace_fact(store, fact.id, "CI runs on GitLab CI", project_key=ALPHA, now=later)
    assert replaced.id == fact.id and replaced.created == NOW
    assert [f.text for f in FactStore(store).facts(project_key=ALPHA)] == ["CI runs on GitLab CI"]
    with pytest.raises(SecretRefusedError):
        replace_fact(store, fact.id, "password = hunter2!!", project_key=ALPHA, now=later)


def test_replace_checks_other_facts_but_not_itself(store):
    facts = FactStore(store)
    a = facts.add(
        "Python 3.11 is the runtime", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    facts.add("Deploys go to Fly.io", scope="project", project_key=ALPHA, source="user", now=NOW)
    replace_fact(store, a.id, "Python 3.12 is the runtime", project_key=ALPHA, now=NOW)
    with pytest.raises(ConflictError):
        replace_fact(store, a.id, "Deploys go to Fly.io!", project_key=ALPHA, now=NOW)


def test_unknown_or_invisible_id_is_not_found(store):
    fact = FactStore(store).add(
        "Use uv for envs", scope="project", project_key=ALPHA, source="user", now=NOW
    )
    with pytest.raises(FactNotFoundError):
        delete_fact(store, fact.id, project_key=BETA)
    with pytest.raises(FactNotFoundError):
        verify_fact(store, "nope", project_key=ALPHA, now=NOW)


def test_export_wipe_import_round_trip_is_lossless(store, tmp_path):
    facts = FactStore(store)
    made = [
        facts.add(
            "Use Java 17",
            scope="project",
            project_key=ALPHA,
            source="user",
            now=NOW,
            provenance={"thread": "t9"},
        ),
        facts.add("Answer in Chinese", scope="global", project_key=ALPHA, source="agent", now=NOW),
        facts.add("Tests use pytest", scope="project", project_key=BETA, source="auto", now=NOW),
    ]
    lines = list(export_jsonl(all_facts(store)))
    assert len(lines) == 3
    for fact in made:
        delete_fact(store, fact.id, project_key=fact.project_key or ALPHA)
    assert all_facts(store) == []
    report = import_jsonl(store, lines, project_key="/elsewhere", now=NOW + timedelta(days=1))
    assert report.imported == 3 and report.skipped == ()
    assert sorted(all_facts(store), key=lambda f: f.id) == sorted(made, key=lambda f: f.id)


def test_import_checks_every_stored_field_for_secrets(store):
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    lines = [
        json.dumps({"id": token, "text": "Prefer tabs", "scope": "global"}),
        json.dumps(
            {"id": "p1", "text": "Prefer tabs", "scope": "project", "project_key": f"/srv/{token}"}
        ),
        json.dumps(
            {
                "id": "p2",
                "text": "Prefer tabs",
                "scope": "global",
                "provenance": {"thread": "t", "api_key": "9f86d081884c7d659a2feaa0c55ad015"},
            }
        ),
        json.dumps(
            {
                "id": "ok",
                "text": "Prefer tabs",
                "scope": "global",
                "provenance": {"thread": "t1", "message": "m1"},
            }
        ),
    ]
    report = import_jsonl(store, lines, project_key=ALPHA, now=NOW)
    assert report.imported == 1
    assert [n for n, _ in report.skipped] == [1, 2, 3]
    assert all("refused to import" in reason for _, reason in report.skipped)
    assert [f.id for f in all_facts(store)] == ["ok"]


def test_import_accepts_minimal_lines_and_reports_bad_ones(store):
    lines = [
        '{"id": "D1:3", "text": "Caroline went to the LGBTQ support group", "scope": "project"}',
        '{"id": "g1", "text": "Prefer short answers", "scope": "global"}',
        '{"text": "no id given", "scope": "project"}',
        "not json",
        '{"id": "x", "text": "token = ghp_abcdefghijklmnopqrstuvwxyz0123456789", '
        '"scope": "global"}',
        '{"id": "y", "text": "", "scope": "global"}',
    ]
    report = import_jsonl(store, lines, project_key=ALPHA, now=NOW)
    assert report.imported == 3
    assert [n for n, _ in report.skipped] == [4, 5, 6]
    fact = FactStore(store).get("D1:3", project_key=ALPHA)
    assert fact is not None and fact.project_key == ALPHA and fact.created == NOW
    hits = FactStore(store).search("support group", project_key=ALPHA)
    assert hits[0].fact.id == "D1:3"


def test_project_key_with_dots_is_a_valid_namespace(store):
    namespace = fact_namespace("project", "/home/u/my.app/v1.2")
    assert all("." not in label for label in namespace)


class _CountingEmbedder:
    """Bag-of-letters embedder that counts how many texts it embedded."""

    model_id = "letters-test"
    dim = 26

    def __init__(self):
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    rows[r, ord(ch) - 97] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1, norms)


def test_dense_scoring_joins_above_threshold_and_vectors_are_cached(store):
    embedder = _CountingEmbedder()
    facts = FactStore(store, embedder=embedder, dense_min_facts=5)
    for i in range(4):
        facts.add(
            f"alpha fact {i} zzz",
            scope="project",
            project_key=ALPHA,
            source="user",
            force=True,
            now=NOW,
        )
    facts.search("alpha", project_key=ALPHA)
    assert embedder.embedded == 0
    for i in range(4):
        facts.add(
            f"beta fact {i} qqq",
            scope="project",
            project_key=ALPHA,
            source="user",
            force=True,
            now=NOW,
        )
    # Dense similarity finds a fact sharing no word with the query.
    hits = facts.search("bbeett", project_key=ALPHA, k=3)
    assert hits and "beta" in hits[0].fact.text
    first = embedder.embedded
    assert first == 8 + 1
    FactStore(store, embedder=embedder, dense_min_facts=5).search("alpha", project_key=ALPHA)
    assert embedder.embedded == first + 1


def test_embedder_failure_falls_back_to_lexical_ranking(store, caplog):
    class Broken:
        model_id = "broken"

        def embed(self, texts):
            raise StoreError("embedding endpoint unreachable")

    facts = FactStore(store, embedder=Broken(), dense_min_facts=2)
    for text in ("alpha one", "beta two", "gamma three"):
        facts.add(text, scope="project", project_key=ALPHA, source="user", now=NOW)
    hits = facts.search("beta", project_key=ALPHA)
    assert hits[0].fact.text == "beta two"
    assert "without embeddings" in caplog.text


def test_import_keeps_the_file_order_as_recorded_order(store):
    # Ids that sort differently from the file: the order must come from the lines.
    ids = ["D1:10", "D1:9", "b", "a", "D2:1"]
    lines = [
        json.dumps({"id": i, "text": f"turn {n}", "scope": "project"}) for n, i in enumerate(ids)
    ]
    import_jsonl(store, lines, project_key=ALPHA, now=NOW)
    ordered = [f.id for f in FactStore(store).facts(project_key=ALPHA)]
    assert ordered == ids
    # The order survives an export and a re-import of the lines in another order.
    exported = list(export_jsonl(all_facts(store, project_key=ALPHA)))
    restored = InMemoryStore()
    import_jsonl(restored, exported[::-1], project_key=BETA, now=NOW)
    assert [f.id for f in FactStore(restored).facts(project_key=ALPHA)] == ids


def test_search_uses_neighbouring_facts_as_context(store):
    lines = [
        json.dumps({"id": str(n), "text": text, "scope": "project"})
        for n, text in enumerate(CONTEXT_TEXTS)
    ]
    import_jsonl(store, lines, project_key=ALPHA, now=NOW)
    hits = FactStore(store).search("pottery class kitchen", project_key=ALPHA, k=3)
    assert [h.fact.id for h in hits] == ["0", "2", "4"]
    # Only a large memory returns a match's neighbours that share no word with the query.
    assert [h.fact.id for h in FactStore(store).search("pottery", project_key=ALPHA)] == ["0"]
    large = FactStore(store, dense_min_facts=len(CONTEXT_TEXTS) - 1)
    assert [h.fact.id for h in large.search("pottery", project_key=ALPHA)] == ["0", "1", "2"]


def test_from_record_rejects_bad_values():
    with pytest.raises(ValueError):
        Fact.from_record({"id": "a", "text": "x", "scope": "global", "seq": "1"})
    with pytest.raises(ValueError):
        Fact.from_record({"id": "a", "text": "x", "scope": "team"})
    with pytest.raises(ValueError):
        Fact.from_record({"id": "a", "text": "x", "scope": "project"})


record_text = st.text(min_size=1, max_size=60).filter(lambda t: t.strip())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            record_text,
            st.sampled_from(["project", "global"]),
            st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=2),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_export_import_round_trip_property(rows):
    target = InMemoryStore()
    facts = [
        Fact(
            id=f"id{i}",
            text=text.strip(),
            scope=scope,
            project_key=ALPHA if scope == "project" else "",
            created=NOW,
            last_verified=None if i % 2 else NOW,
            source="user",
            status="unverified" if i % 2 else "verified",
            provenance=prov,
        )
        for i, (text, scope, prov) in enumerate(rows)
    ]
    facts = [f for f in facts if find_secret(f.text) is None]
    lines = list(export_jsonl(facts))
    report = import_jsonl(target, lines, project_key=BETA, now=NOW)
    assert report.imported == len(facts)
    assert sorted(all_facts(target), key=lambda f: f.id) == facts


def test_import_rejects_bad_provenance():
    report = import_jsonl(
        InMemoryStore(),
        ['{"id": "a", "text": "x", "scope": "global", "provenance": ["not", "a", "map"]}'],
        project_key=ALPHA,
        now=NOW,
    )
    assert report.imported == 0 and report.skipped[0][0] == 1


def test_a_unique_id_prefix_finds_a_fact_and_an_ambiguous_one_lists_the_candidates(store):
    from engram.stores.memory import find_fact

    lines = [
        json.dumps({"id": "ab12cd000001", "text": "The API uses OAuth", "scope": "project"}),
        json.dumps({"id": "ab12cd000002", "text": "Deploys on Fridays", "scope": "global"}),
        json.dumps({"id": "ff0000000003", "text": "Tabs, not spaces", "scope": "project"}),
    ]
    assert import_jsonl(store, lines, project_key=ALPHA, now=NOW).imported == 3
    assert find_fact(store, "ab12cd000001", project_key=ALPHA).text == "The API uses OAuth"
    assert find_fact(store, "ff00", project_key=ALPHA).text == "Tabs, not spaces"
    assert find_fact(store, "ab12cd000002"[:11], project_key=BETA).scope == "global"
    with pytest.raises(FactNotFoundError, match="no fact"):
        find_fact(store, "ff00", project_key=BETA)  # a project fact, not visible elsewhere
    with pytest.raises(FactNotFoundError, match="2 facts") as caught:
        find_fact(store, "ab12", project_key=ALPHA)
    assert "ab12cd000001" in str(caught.value) and "ab12cd000002" in str(caught.value)
    assert caught.value.hint == "type more of the id to pick one"
    with pytest.raises(FactNotFoundError):
        find_fact(store, "", project_key=ALPHA)


def test_exports_carry_no_terminal_control_and_a_backup_restores_the_exact_text():
    hostile = "Title\x1b]0;pwned\x07 \u202eevil\u202c \x85next \x7f and \ud800 half"
    fact = Fact(
        id="f1",
        text=hostile,
        scope="project",
        project_key=ALPHA,
        created=NOW,
        last_verified=None,
        source="user",
        status="unverified",
        provenance={},
    )
    (line,) = export_jsonl([fact])
    line.encode("utf-8")  # writable: no lone surrogate left raw
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in line)
    assert "\u202e" not in line and "\u202c" not in line
    assert json.loads(line)["text"] == hostile
    target = InMemoryStore()
    assert import_jsonl(target, [line], project_key=ALPHA, now=NOW).imported == 1
    assert [f.text for f in all_facts(target)] == [hostile]
    document = facts_markdown([fact])
    assert "\x1b" not in document and "\u202e" not in document and "\x85" not in document
    assert "\\x1b]0;pwned\\x07" in document
