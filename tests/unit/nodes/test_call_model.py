"""Node ``call_model``: what it reports besides the model's reply."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State
from engram.graph.tools import McpToolset
from engram.nodes import call_model
from tests.unit.nodes.fake_models import RecordingChatModel

BROKEN = "MCP server 'gone' could not start: no such file"


async def test_a_broken_mcp_server_is_reported_once_a_session_not_every_turn(tmp_path):
    model = RecordingChatModel(responses=[AIMessage("one"), AIMessage("two")])
    deps = Deps(
        model_factory=lambda context: model,
        open_mcp_tools=lambda context: McpToolset(notes=(BROKEN,)),
    )
    runtime = Runtime(context=Context(project=str(tmp_path), engram_home=str(tmp_path / "h")))
    first = await call_model(
        State(messages=[HumanMessage("hi", id="u1")], task="hi"), runtime, deps=deps
    )
    assert first["notes"] == [BROKEN]
    second_turn = State(
        messages=[
            HumanMessage("hi", id="u1"),
            AIMessage("one", id="a1"),
            HumanMessage("again", id="u2"),
        ],
        task="again",
        notes=first["notes"],
    )
    second = await call_model(second_turn, runtime, deps=deps)
    assert second["notes"] == [] and second["messages"][-1].content == "two"
