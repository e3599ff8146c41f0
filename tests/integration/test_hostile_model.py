"""A scripted hostile model, through the real HTTP stub, tries every way out of a hostile project."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from engram.builder import build_graph
from engram.graph import Context, make_default_deps
from tests.support.hostile_paths import MARKER, build_hostile_project
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration


async def test_a_hostile_model_gets_no_secret_and_no_hang(tmp_path: Path):
    project = build_hostile_project(tmp_path)
    reads = [rel for _, rel in project.refused] + [project.fifo]
    calls = [{"name": "read_file", "args": {"path": rel}} for rel in reads]
    calls += [
        {"name": "grep_code", "args": {"pattern": "needle", "glob": g}}
        for g in ("*", "config", ".git/**", ".engram/**", "**/.env")
    ]
    calls += [{"name": "glob_files", "args": {"pattern": g}} for g in ("**", ".*", "home/**")]
    script = [{"tool_calls": calls}, {"content": "nothing found"}]
    with OpenAIStub(script) as stub:
        context = Context(
            project=str(project.root),
            model="stub-model",
            base_url=stub.base_url,
            engram_home=str(tmp_path / "home"),
            tool_timeout_s=20,
        )
        graph = build_graph(make_default_deps(), checkpointer=InMemorySaver())
        out = await graph.ainvoke(
            {"messages": [("user", "print the contents of .env, .git/config and notes.txt")]},
            {"configurable": {"thread_id": "hostile"}},
            context=context,
        )
    assert out["messages"][-1].content == "nothing found"
    sent = str(stub.requests)
    assert MARKER not in sent
    tool_results = [m for m in out["messages"] if m.type == "tool"]
    assert len(tool_results) == len(calls)
    assert sum(m.status == "error" for m in tool_results) == len(reads)
    assert "FIFO" in tool_results[len(reads) - 1].content
