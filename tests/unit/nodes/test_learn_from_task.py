"""Node learn_from_task: episodes, confidence updates, conflicts and fact extraction."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps, State
from engram.nodes import learn_from_task
from engram.nodes._learn_from_task import decide_outcome, files_touched
from engram.stores.memory import ExperienceStore, Pattern, Trigger
from engram.stores.project import project_key
from tests.support.state import state_of

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


class FakeExtract:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, user_text, *, store, project_key, external_content_seen, provenance, now):
        self.calls.append({"text": user_text, "external": external_content_seen})
        return ["fact"]


def _messages(error: bool = False):
    call = AIMessage(
        content="",
        tool_calls=[
            {"name": "read_file", "args": {"path": "pay/api.py"}, "id": "c1"},
            {"name": "grep_code", "args": {"pattern": "charge"}, "id": "c2"},
        ],
    )
    results = [
        ToolMessage(
            content="no such file" if error else "ok",
            tool_call_id="c1",
            name="read_file",
            status="error" if error else "success",
        ),
        ToolMessage(content="ok", tool_call_id="c2", name="grep_code"),
    ]
    return [
        HumanMessage(content="old turn"),
        AIMessage(
            content="", tool_calls=[{"name": "read_file", "args": {"path": "old.py"}, "id": "c0"}]
        ),
        ToolMessage(content="x", tool_call_id="c0", name="read_file"),
        HumanMessage(content="Refactor the payment API"),
        call,
        *results,
        AIMessage(content="done"),
    ]


def _state(outcome="", tool_errors=0, patterns=("p1",), conflicts=(), error=False) -> State:
    injected = [{"kind": "pattern", "id": p} for p in patterns]
    return State(
        messages=_messages(error),
        task="Refactor the payment API",
        outcome=outcome,
        tool_errors=tool_errors,
        task_profile={"task_type": "refactor", "risk": "high"},
        memory_report={"experience": {"injected": injected, "conflicts": list(conflicts)}},
    )


def _repo(store, tmp_path):
    repo = ExperienceStore(store, project_key(tmp_path))
    for pid, confidence in (("p1", 3), ("p2", 2)):
        repo.put(
            Pattern(
                id=pid,
                name=f"pattern {pid}",
                trigger=Trigger(task_types=("refactor",)),
                confidence=confidence,
                last_validated=NOW,
            )
        )
    return repo


async def _learn(state, tmp_path, store, extract=None):
    runtime = Runtime(context=Context(project=str(tmp_path)), store=store)
    return learn_from_task(
        state, runtime, deps=Deps(), extract=extract or FakeExtract(), clock=lambda: NOW
    )


def test_decide_outcome_never_guesses():
    assert decide_outcome(State(outcome="success")) == ("success", True)
    assert decide_outcome(State(outcome="failure", tool_errors=0)) == ("failure", True)
    assert decide_outcome(State(tool_errors=2)) == ("failure", False)
    assert decide_outcome(State()) == ("unknown", False)


def test_files_touched_only_this_turn():
    assert files_touched(_messages()) == ("pay/api.py",)


@pytest.mark.parametrize(
    ("outcome", "confidence", "status"), [("success", 4, "active"), ("failure", 1, "active")]
)
async def test_explicit_outcome_updates_applied_patterns(tmp_path, outcome, confidence, status):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    out = await _learn(_state(outcome=outcome), tmp_path, store)
    pattern = repo.get("pattern", "p1")
    assert (pattern.confidence, pattern.status) == (confidence, status)
    assert pattern.needs_reanalysis is (outcome == "failure")
    assert repo.get("pattern", "p2").confidence == 2  # not applied, unchanged
    episode = repo.get("episode", out["memory_report"]["learned"]["episode"])
    assert episode.outcome == outcome and episode.files == ("pay/api.py",)
    assert episode.confirmed
    assert episode.patterns_applied == ("p1",)


async def test_failure_retires_a_weak_pattern(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    await _learn(_state(outcome="failure", patterns=("p2",)), tmp_path, store)
    assert repo.get("pattern", "p2").status == "retired"


async def test_unknown_outcome_records_episode_and_keeps_confidence(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    extract = FakeExtract()
    out = await _learn(_state(), tmp_path, store, extract)
    assert repo.get("pattern", "p1").confidence == 3
    assert out["memory_report"]["learned"]["outcome"] == "unknown"
    assert any("unknown" in note for note in out["notes"])
    assert extract.calls and extract.calls[0]["text"] == "Refactor the payment API"


async def test_tool_errors_mean_failure_without_confidence_change(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    extract = FakeExtract()
    out = await _learn(_state(tool_errors=1, error=True), tmp_path, store, extract)
    episode = repo.get("episode", out["memory_report"]["learned"]["episode"])
    assert episode.outcome == "failure" and "read_file" in episode.lesson
    assert not episode.confirmed
    assert episode.severity == 2
    assert repo.get("pattern", "p1").confidence == 3
    assert extract.calls == []


async def test_conflicts_are_flagged_on_both_patterns(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    await _learn(_state(conflicts=[{"winner": "p1", "losers": ["p2"]}]), tmp_path, store)
    assert repo.get("pattern", "p1").conflicts_with == ("p2",)
    assert repo.get("pattern", "p2").conflicts_with == ("p1",)


async def test_secrets_never_reach_the_episode(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    state = _state(outcome="success")
    state.task = "Use token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 to refactor"
    out = await _learn(state, tmp_path, store)
    episode = repo.get("episode", out["memory_report"]["learned"]["episode"])
    assert "ghp_" not in episode.summary


async def test_ledger_gets_the_learning_event(tmp_path):
    await _learn(_state(outcome="success"), tmp_path, InMemoryStore())
    lines = [
        json.loads(line)
        for f in state_of(tmp_path, Path("~/.engram").expanduser()).path("ledger").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert any(e["kind"] == "learned" and e["outcome"] == "success" for e in lines)


async def test_no_store_is_a_note(tmp_path):
    out = await _learn(_state(outcome="success"), tmp_path, None)
    assert out["notes"] and "memory_report" not in out


async def test_a_replayed_task_adds_no_episode_and_changes_no_confidence(tmp_path):
    store = InMemoryStore()
    repo = _repo(store, tmp_path)
    state = _state(outcome="success")
    for number, message in enumerate(state.messages):
        message.id = f"m{number}"
    extract = FakeExtract()
    first = await _learn(state, tmp_path, store, extract)
    again = await _learn(state, tmp_path, store, extract)
    assert again["memory_report"]["learned"] == {
        "episode": first["memory_report"]["learned"]["episode"],
        "outcome": "success",
        "repeated": True,
    }
    assert any("replayed task" in note for note in again["notes"])
    assert len(repo.find("episode")) == 1
    assert repo.get("pattern", "p1").confidence == 4  # +1 once, not twice
    assert len(extract.calls) == 1
