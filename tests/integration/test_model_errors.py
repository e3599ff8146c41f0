"""The agent loop against a real OpenAI-compatible HTTP server: overflow recovery and spills."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from engram.builder import build_graph
from engram.graph import Context, make_default_deps
from tests.support.openai_stub import OpenAIStub, history_problems
from tests.support.state import state_of

pytestmark = pytest.mark.integration


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "big.txt").write_text("".join(f"row {i} {'x' * 60}\n" for i in range(2000)))
    (root / "app.py").write_text("def main():\n    return 1\n")
    return root


async def test_context_overflow_compacts_once_and_retries(tmp_path: Path):
    root = _project(tmp_path)
    overflow = {
        "status": 400,
        "error": {
            "message": "This model's maximum context length is 8192 tokens",
            "code": "context_length_exceeded",
        },
    }
    script = [
        {"tool_calls": [{"name": "read_file", "args": {"path": "big.txt", "end_line": 300}}]},
        {"content": "first answer"},
        {"tool_calls": [{"name": "read_file", "args": {"path": "app.py"}}]},
        overflow,
        {"content": "second answer"},
    ]
    with OpenAIStub(script) as stub:
        context = Context(
            project=str(root),
            model="stub-model",
            base_url=stub.base_url,
            engram_home=str(tmp_path / "home"),
        )
        graph = build_graph(make_default_deps(), checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"messages": [("user", "question one")]}, config, context=context)
        out = await graph.ainvoke({"messages": [("user", "question two")]}, config, context=context)
        assert out["messages"][-1].content == "second answer"
        assert any("too long" in note for note in out["notes"])
        assert out["compaction_log"][-1]["tier"] == "emergency"
        retry = stub.requests[-1]["messages"]
        assert history_problems(retry) == []
        assert len(str(retry)) < len(str(stub.requests[-2]["messages"])) - 10_000
        assert "question two" in retry[-3]["content"] or any(
            "question two" in str(m.get("content")) for m in retry
        )


async def test_large_tool_output_is_spilled_and_readable(tmp_path: Path):
    root = _project(tmp_path)
    script = [
        {"tool_calls": [{"name": "read_file", "args": {"path": "big.txt", "end_line": 2000}}]},
        {"content": "done"},
    ]
    with OpenAIStub(script) as stub:
        context = Context(
            project=str(root),
            model="stub-model",
            base_url=stub.base_url,
            engram_home=str(tmp_path / "home"),
        )
        graph = build_graph(make_default_deps(), checkpointer=InMemorySaver())
        out = await graph.ainvoke(
            {"messages": [("user", "read big.txt")]},
            {"configurable": {"thread_id": "s"}},
            context=context,
        )
    tool_message = out["messages"][2]
    assert "full output saved to .engram/tool-outputs/" in tool_message.content
    assert len(tool_message.content) < 32_000
    spilled = list(state_of(root, tmp_path / "home").path("tool-outputs", "s").iterdir())
    assert len(spilled) == 1 and "row 700 " in spilled[0].read_text()
    assert not (root / ".engram").exists()
