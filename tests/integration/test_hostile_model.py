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


def _run_graph(stub: OpenAIStub, root: Path, home: Path):
    context = Context(
        project=str(root), model="stub-model", base_url=stub.base_url, engram_home=str(home)
    )
    return build_graph(make_default_deps(), checkpointer=InMemorySaver()), context


async def test_a_call_with_unreadable_arguments_is_answered_and_nothing_runs(tmp_path: Path):
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    cut_off = '{"path": "planted.txt", "content": "x"'  # an edit whose JSON never closes
    script = [
        {
            "tool_calls": [
                {"name": "write_file", "raw_arguments": cut_off},
                {"name": "read_file", "args": {"path": "a.py"}},
            ]
        },
        {"content": "first answer"},
        {"content": "second answer"},
    ]
    with OpenAIStub(script) as stub:
        graph, context = _run_graph(stub, root, tmp_path / "home")
        config = {"configurable": {"thread_id": "t"}}
        first = await graph.ainvoke({"messages": [("user", "edit it")]}, config, context=context)
        second = await graph.ainvoke({"messages": [("user", "again")]}, config, context=context)
    assert first["messages"][-1].content == "first answer"
    assert second["messages"][-1].content == "second answer"  # the history stayed valid
    assert not (root / "planted.txt").exists()
    results = [m for m in first["messages"] if m.type == "tool"]
    assert [m.status for m in results] == ["success", "error"]  # the readable call first
    assert "x = 1" in results[0].content
    assert "not valid JSON" in results[1].content and "Nothing ran" in results[1].content
    assert not stub.rejected and len(stub.requests) == 3


async def test_a_reply_that_cannot_be_read_is_asked_again_then_reported(tmp_path: Path):
    from engram.graph import ModelReplyError

    root = tmp_path / "p"
    root.mkdir()
    unreadable = {"tool_calls": [{"name": "read_file", "raw_arguments": "[1, 2]"}]}
    with OpenAIStub([unreadable, {"content": "read it"}]) as stub:
        graph, context = _run_graph(stub, root, tmp_path / "home")
        out = await graph.ainvoke(
            {"messages": [("user", "read")]}, {"configurable": {"thread_id": "t"}}, context=context
        )
    assert out["messages"][-1].content == "read it" and len(stub.requests) == 2
    with OpenAIStub([unreadable, unreadable]) as stub:
        graph, context = _run_graph(stub, root, tmp_path / "home2")
        with pytest.raises(ModelReplyError, match="two replies of the model in a row"):
            await graph.ainvoke(
                {"messages": [("user", "read")]},
                {"configurable": {"thread_id": "t"}},
                context=context,
            )
