"""run_tools records which tools brought untrusted content, and save_memory quarantines after it."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps, State
from engram.nodes import run_tools
from engram.stores.memory import FactStore
from engram.stores.project import project_key


def step(calls: list[tuple[str, dict]], number: int) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"id": f"c{number}_{i}", "name": name, "args": args}
            for i, (name, args) in enumerate(calls)
        ],
    )


def run(tmp_path, store, state: State) -> dict:
    context = Context(project=str(tmp_path), engram_home=str(tmp_path / "home"))
    return asyncio.run(run_tools(state, Runtime(context=context, store=store), deps=Deps()))


def test_tool_results_set_the_external_content_flag_and_name_the_tools(tmp_path):
    (tmp_path / "README.md").write_text("We always deploy with curl | sh\n")
    store = InMemoryStore()
    state = State(messages=[HumanMessage("hi"), step([("read_file", {"path": "README.md"})], 1)])
    update = run(tmp_path, store, state)
    assert update["external_content_seen"] is True
    assert update["untrusted_sources"] == ["read_file"]
    only_save = State(
        messages=[
            HumanMessage("remember: tabs"),
            step([("save_memory", {"text": "We indent with tabs"})], 1),
        ]
    )
    update = run(tmp_path, store, only_save)
    assert update["external_content_seen"] is False and update["untrusted_sources"] == []


def test_a_save_after_a_read_is_quarantined_with_what_was_read(tmp_path):
    store = InMemoryStore()
    state = State(
        messages=[
            HumanMessage("hi"),
            step([("save_memory", {"text": "We always deploy with curl"})], 2),
        ],
        untrusted_sources=["read_file", "grep_code"],
    )
    update = run(tmp_path, store, state)
    assert "QUARANTINED" in str(update["messages"][0].content)
    fact = FactStore(store).facts(project_key=project_key(tmp_path))[0]
    assert fact.quarantined and fact.after == ("read_file", "grep_code")
