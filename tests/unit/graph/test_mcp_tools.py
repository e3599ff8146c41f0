"""MCP tools as the model sees them: names, approval, the schema budget, find_tools."""

from __future__ import annotations

import json

import pytest

from engram.graph import Context
from engram.graph._errors import ToolError
from engram.graph.tools import McpToolset, PlannedFiles, action_kind, needs_approval, propose
from engram.graph.tools._mcp import MCP_SCHEMA_SHARE, mcp_tools, schema_tokens
from engram.graph.tools._mcp_client import McpToolSpec
from engram.stores.project import McpServer, load_project_settings


def words(text: str) -> int:
    return len(text.split())


def _toolset(count: int) -> McpToolset:
    specs = {
        f"inv__move_{i}": McpToolSpec(
            "inv",
            f"move_{i}",
            f"Record stock movement {i} between warehouses for audits.",
            {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        )
        for i in range(count)
    }
    specs["inv__weather"] = McpToolSpec(
        "inv", "weather", "Forecast for a city.", {"type": "object", "properties": {}}
    )
    return McpToolset({"inv": McpServer("inv", "inv-server")}, specs)


def test_small_toolsets_are_bound_tool_by_tool(tmp_path):
    context = Context(project=str(tmp_path), context_window=100_000)
    tools = mcp_tools(_toolset(3), context, words)
    assert [t.name for t in tools] == ["inv__move_0", "inv__move_1", "inv__move_2", "inv__weather"]
    assert "[MCP inv] Forecast" in tools[-1].description
    assert tools[0].args["sku"] == {"type": "string"}


def test_past_the_share_of_the_window_only_search_and_call_are_bound(tmp_path):
    toolset = _toolset(60)
    context = Context(project=str(tmp_path), context_window=8_000)
    direct = mcp_tools(toolset, context.replace(context_window=10**7), words)
    assert schema_tokens(direct, words) > MCP_SCHEMA_SHARE * context.context_window
    tools = {t.name: t for t in mcp_tools(toolset, context, words)}
    assert set(tools) == {"find_tools", "call_tool"}
    assert schema_tokens(list(tools.values()), words) < schema_tokens(direct, words) / 10
    found = json.loads(tools["find_tools"].invoke({"query": "weather forecast"}))
    assert found[0]["name"] == "inv__weather"
    assert found[0]["parameters"] == {"type": "object", "properties": {}}
    assert len(json.loads(tools["find_tools"].invoke({"query": "stock movement"}))) == 8
    assert "no MCP tool matches" in tools["find_tools"].invoke({"query": "zebra"})
    with pytest.raises(ToolError, match="unknown MCP tool 'inv__nope'"):
        tools["call_tool"].invoke({"name": "inv__nope", "arguments": {}})


def test_no_servers_no_tools(tmp_path):
    assert mcp_tools(McpToolset(), Context(project=str(tmp_path)), words) == []


def test_mcp_calls_are_actions_with_their_target_named(tmp_path):
    assert action_kind("docs__search") == "mcp"
    assert action_kind("call_tool") == "mcp"
    assert action_kind("find_tools") is None and action_kind("read_file") is None
    assert action_kind("edit_file") == "edit"
    files = PlannedFiles(tmp_path)
    direct = propose(files, {"name": "docs__search", "args": {"q": "x"}, "id": "1"})
    assert direct["category"] == "mcp" and direct["mcp_tool"] == "docs__search"
    via = propose(
        files, {"name": "call_tool", "args": {"name": "docs__get", "arguments": {}}, "id": "2"}
    )
    assert via["mcp_tool"] == "docs__get"


@pytest.mark.parametrize(
    ("policy", "high_risk", "kinds", "tool", "asks"),
    [
        ("ask", False, [], "docs__search", True),
        ("auto-edit", False, [], "docs__search", True),  # not an edit: still asks
        ("yolo", False, [], "docs__search", False),
        ("ask", False, [], "docs__get", False),  # allowlisted by name
        ("ask", False, [], "tracker__read_issue", False),  # allowlisted by glob
        ("ask", False, [], "tracker_x__read", True),
        ("yolo", True, [], "docs__get", True),  # high risk always asks
        ("ask", False, ["mcp"], "docs__search", False),  # approved for the session
    ],
)
def test_mcp_approval(policy, high_risk, kinds, tool, asks):
    assert (
        needs_approval(
            "mcp",
            policy=policy,
            high_risk=high_risk,
            approved_kinds=kinds,
            mcp_tool=tool,
            mcp_allow=["docs__get", "tracker__*"],
        )
        is asks
    )


def test_settings_allow_mcp_tools(tmp_path):
    (tmp_path / ".engram").mkdir()
    (tmp_path / ".engram" / "settings.toml").write_text('[mcp]\nallow = ["docs__*"]\n')
    assert load_project_settings(tmp_path).allow_mcp == ("docs__*",)
