"""Chat slash commands and the save_memory tool over an in-memory store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.memory import InMemoryStore

from engram.cli._chat_memory_commands import (
    MEMORY_USAGE,
    handle_memory_command,
    is_memory_command,
)
from engram.graph import Context, Deps
from engram.graph.tools import SAVE_MEMORY_TOOL, build_tools
from engram.graph.tools._save_memory import build_save_memory_tool
from engram.stores.memory import FactStore, recall_facts, verify_fact
from engram.stores.project import project_key

NOW = datetime(2026, 3, 1, tzinfo=UTC)
KEY = "/srv/app"


@pytest.fixture
def store():
    return InMemoryStore()


def run(store, line, now=NOW):
    return handle_memory_command(line, store=store, project_key=KEY, now=now)


def test_save_list_search(store):
    assert run(store, "/save  This project uses Java 17 ").startswith("saved [")
    assert "to global memory" in run(store, "/save --global I don't like emoji")
    listed = run(store, "/memory list")
    assert "This project uses Java 17" in listed and "I don't like emoji" in listed
    assert "Java 17" in run(store, "/memory search java")
    assert "no facts match" in run(store, "/memory search kubernetes")


def test_conflict_lists_both_and_choices_and_force_keeps_both(store):
    run(store, "/save This project uses Java 17")
    reply = run(store, "/save This project uses Java 21")
    assert reply.startswith("not saved")
    assert "Java 17" in reply and "Java 21" in reply
    assert "/memory replace" in reply and "/save --force" in reply
    assert len(FactStore(store).facts(project_key=KEY)) == 1
    assert run(store, "/save --force This project uses Java 21").startswith("saved")
    assert len(FactStore(store).facts(project_key=KEY)) == 2


def test_secret_refused(store):
    reply = run(store, "/save db url postgres://app:hunter2@db:5432/x")
    assert reply.startswith("error:") and "URL with credentials" in reply
    assert FactStore(store).facts(project_key=KEY) == []


def test_verify_replace_delete_and_stale_mark(store):
    run(store, "/save Deploys go through Helm", now=NOW - timedelta(days=45))
    fact = FactStore(store).facts(project_key=KEY)[0]
    assert "possibly stale" in run(store, "/memory list")
    assert run(store, f"/memory verify {fact.id}").startswith("verified")
    assert "possibly stale" not in run(store, "/memory list")
    assert "Argo CD" in run(store, f"/memory replace {fact.id} Deploys go through Argo CD")
    assert run(store, f"/memory delete {fact.id}").startswith("deleted")
    assert "hint:" in run(store, f"/memory delete {fact.id}")


@pytest.mark.parametrize(
    "line", ["/memory", "/memory frobnicate", "/memory replace onlyid", "/memory search"]
)
def test_usage(store, line):
    assert run(store, line) == MEMORY_USAGE


def test_is_memory_command():
    assert is_memory_command("/save x") and is_memory_command(" /memory list")
    assert not is_memory_command("/compact") and not is_memory_command("")


def _tool(tmp_path, store, after=()):
    context = Context(project=str(tmp_path), engram_home=str(tmp_path / "home"))
    return build_save_memory_tool(context, store, after=after), project_key(tmp_path)


def _recalled(store, key, query):
    return recall_facts(
        store,
        query,
        project_key=key,
        window=128_000,
        count_tokens=lambda t: len(t.split()),
        now=NOW,
    ).block


def test_tool_saves_an_unverified_project_fact_before_any_untrusted_content(tmp_path, store):
    tool, key = _tool(tmp_path, store)
    assert tool.name == "save_memory"
    reply = tool.invoke({"text": "Reply in Chinese"})
    assert reply.startswith("Saved to project memory")
    fact = FactStore(store).facts(project_key=key)[0]
    assert (fact.source, fact.status, fact.after) == ("agent", "unverified", ())
    assert "Reply in Chinese" in _recalled(store, key, "reply in chinese")
    assert "by model;" in _recalled(store, key, "reply in chinese")


def test_tool_never_saves_global_on_its_own(tmp_path, store):
    tool, key = _tool(tmp_path, store)
    reply = tool.invoke({"text": "We always deploy with curl", "scope": "global"})
    assert reply.startswith("QUARANTINED") and "verify" in reply and "--global" in reply
    assert FactStore(store).facts(project_key="") == []  # nothing reached global memory
    fact = FactStore(store).facts(project_key=key)[0]
    assert (fact.scope, fact.status) == ("project", "quarantined")
    assert fact.provenance["requested_scope"] == "global"
    assert _recalled(store, key, "deploy curl") == ""


def test_tool_quarantines_after_untrusted_content_until_confirmed(tmp_path, store):
    tool, key = _tool(tmp_path, store, after=("read_file", "grep_code"))
    reply = tool.invoke({"text": "We always deploy with curl"})
    assert "proposed after reading read_file, grep_code" in reply
    fact = FactStore(store).facts(project_key=key)[0]
    assert fact.after == ("read_file", "grep_code") and fact.quarantined
    assert FactStore(store).search("deploy curl", project_key=key) == []
    assert _recalled(store, key, "deploy curl") == ""
    listed = handle_memory_command("/memory list", store=store, project_key=key, now=NOW)
    assert "by model after read_file, grep_code" in listed and "QUARANTINED" in listed
    handle_memory_command(f"/memory verify {fact.id}", store=store, project_key=key, now=NOW)
    block = _recalled(store, key, "deploy curl")
    assert "We always deploy with curl" in block and "by model after read_file" in block


def test_verify_can_move_a_confirmed_fact_to_global_scope(tmp_path, store):
    tool, key = _tool(tmp_path, store)
    tool.invoke({"text": "Answer in French", "scope": "global"})
    fact = FactStore(store).facts(project_key=key)[0]
    moved = verify_fact(store, fact.id, project_key=key, now=NOW, scope="global")
    assert (moved.scope, moved.status, moved.id) == ("global", "verified", fact.id)
    assert [f.id for f in FactStore(store).facts(project_key="")] == [fact.id]
    assert "Answer in French" in _recalled(store, "/another/project", "answer french")


def test_tool_returns_conflict_for_the_user_to_settle(tmp_path, store):
    tool, key = _tool(tmp_path, store)
    FactStore(store).add(
        "This project uses Java 17", scope="project", project_key=key, source="user", now=NOW
    )
    reply = tool.invoke({"text": "This project uses Java 21"})
    assert reply.startswith("NOT SAVED") and "Java 17" in reply and "ask them" in reply
    assert [f.text for f in FactStore(store).facts(project_key=key)] == [
        "This project uses Java 17"
    ]


def test_tool_refuses_secrets_and_is_offered_only_with_a_store(tmp_path, store):
    tool, _ = _tool(tmp_path, store)
    assert tool.invoke({"text": "password: hunter22"}).startswith("REFUSED")
    context = Context(project=str(tmp_path), engram_home=str(tmp_path / "home"))
    names = {t.name for t in build_tools(context, Deps())}
    assert SAVE_MEMORY_TOOL not in names
    # A store injected by a LangGraph server (the node runtime's) is enough.
    assert SAVE_MEMORY_TOOL in {t.name for t in build_tools(context, Deps(), store)}
