"""Offer the tools of configured MCP servers to the model, within a share of the window.

Each server tool becomes ``<server>__<tool>`` with the server's own JSON schema. When those
schemas together would take more than ``MCP_SCHEMA_SHARE`` of the context window, the model
gets two tools instead: ``find_tools(query)`` returns the schemas of the matching tools, and
``call_tool(name, arguments)`` calls one of them. Every call is an action that goes through
the approval policy; every result (and every schema, written by the server) is untrusted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engram.graph._context import Context
from engram.graph._errors import ToolError
from engram.graph._project_trust import project_is_trusted
from engram.graph._sandbox import SandboxUnavailableError, sandbox_for
from engram.graph.tools._mcp_client import McpToolSpec, call_server_tool, list_server_tools
from engram.stores.project import McpServer, load_mcp_servers

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

MCP_SEPARATOR = "__"
"""Between the server's name and the tool's in the name the model sees."""
FIND_TOOLS_NAME = "find_tools"
CALL_TOOL_NAME = "call_tool"
MCP_SCHEMA_SHARE = 0.10
"""Share of the context window the MCP tools' schemas may take before they go behind search."""
FIND_TOOLS_LIMIT = 8
"""Schemas ``find_tools`` returns at most per query."""
TOOL_NAME_CHARS = 64
"""The longest tool name the chat-completions API accepts."""
_WORD = re.compile(r"[a-z0-9]+")


def _model_name(spec: McpToolSpec) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{spec.server}{MCP_SEPARATOR}{spec.tool}")
    return name[:TOOL_NAME_CHARS]


def is_mcp_tool(name: str) -> bool:
    """Return True when a tool call goes to an MCP server (directly or through ``call_tool``)."""
    return name == CALL_TOOL_NAME or MCP_SEPARATOR in name


def mcp_call_target(name: str, args: dict[str, Any]) -> str:
    """Return the ``<server>__<tool>`` a call reaches (``call_tool`` names it in its arguments)."""
    return str(args.get("name", "")) if name == CALL_TOOL_NAME else name


@dataclass(frozen=True)
class McpToolset:
    """The configured servers' tools, listed once per project, and what went wrong."""

    servers: dict[str, McpServer] = field(default_factory=dict)
    specs: dict[str, McpToolSpec] = field(default_factory=dict)
    """Tools by the name the model sees."""
    notes: tuple[str, ...] = ()
    """One line per configuration or server problem (the run goes on without those tools)."""

    def call(self, name: str, arguments: dict[str, Any], context: Context) -> str:
        """Call the tool the model knows as ``name``.

        Raises:
            ToolError: No such tool, or the server failed or reported an error.
        """
        spec = self.specs.get(name)
        if spec is None:
            hint = (
                f"use {FIND_TOOLS_NAME} to look tools up"
                if self.specs
                else "no MCP server tools are available"
            )
            raise ToolError(f"unknown MCP tool {name!r}; {hint}")
        return call_server_tool(
            self.servers[spec.server],
            spec.tool,
            arguments,
            context.project_path,
            context.home_path / "logs",
            wrap=sandboxed(context),
        )


def open_mcp_toolset(context: Context) -> McpToolset:
    """Read ``mcp.json`` (user, then project) and list every server's tools.

    Never raises for a bad file or a broken server: each becomes a note.
    """
    servers, notes = load_mcp_servers(
        context.project_path, context.home_path, project_trusted=project_is_trusted(context)
    )
    try:
        wrap = sandboxed(context)
    except SandboxUnavailableError as exc:
        stdio = [s for s in servers if s.transport == "stdio"]
        servers = [s for s in servers if s.transport != "stdio"]
        notes += [f"MCP server {s.name!r} not started: {exc}" for s in stdio]
        wrap = list
    specs, failures = list_server_tools(
        servers, context.project_path, context.home_path / "logs", wrap=wrap
    )
    named = {_model_name(s): s for s in specs}
    return McpToolset({s.name: s for s in servers}, named, tuple(notes + failures))


def sandboxed(context: Context) -> Callable[[list[str]], list[str]]:
    """Return how a stdio server's command line is wrapped in the run's sandbox.

    Raises:
        SandboxUnavailableError: ``sandbox = "require"`` and none works here.
    """
    sandbox = sandbox_for(context)
    root, home = context.project_path, context.home_path
    return lambda argv: sandbox.wrap(argv, project=root, hidden=(home,))


def _direct_tool(name: str, spec: McpToolSpec, toolset: McpToolset, context: Context) -> BaseTool:
    from langchain_core.tools import StructuredTool

    def run(**arguments: Any) -> str:
        return toolset.call(name, arguments, context)

    schema = {"type": "object", "properties": {}, **spec.input_schema}
    description = spec.description.strip() or f"{spec.tool} from the MCP server {spec.server}"
    return StructuredTool.from_function(
        func=run, name=name, args_schema=schema, description=f"[MCP {spec.server}] {description}"
    )


def _ranked(toolset: McpToolset, query: str) -> list[str]:
    """Return tool names by how many query words their name and description share."""
    words = set(_WORD.findall(query.lower()))
    scores: list[tuple[int, str]] = []
    for name, spec in toolset.specs.items():
        text = set(_WORD.findall(f"{name} {spec.description}".lower()))
        hits = len(words & text) + 2 * sum(1 for w in words if w in name.lower())
        if hits:
            scores.append((hits, name))
    return [name for _, name in sorted(scores, key=lambda s: (-s[0], s[1]))]


def _search_tools(toolset: McpToolset, context: Context) -> list[BaseTool]:
    from langchain_core.tools import StructuredTool
    from pydantic import BaseModel, Field

    class FindToolsArgs(BaseModel):
        """Arguments of ``find_tools``."""

        query: str = Field(description="What the tool should do, in a few words.")

    class CallToolArgs(BaseModel):
        """Arguments of ``call_tool``."""

        name: str = Field(description="The tool's name as find_tools returned it.")
        arguments: dict[str, Any] = Field(
            default_factory=dict, description="Arguments matching the tool's schema."
        )

    def find_tools(query: str) -> str:
        names = _ranked(toolset, query)[:FIND_TOOLS_LIMIT]
        if not names:
            return f"no MCP tool matches {query!r}; servers: {', '.join(toolset.servers)}"
        found = [
            {
                "name": n,
                "description": toolset.specs[n].description,
                "parameters": toolset.specs[n].input_schema,
            }
            for n in names
        ]
        return json.dumps(found, ensure_ascii=False, indent=1)

    def call_tool(name: str, arguments: dict[str, Any] | None = None) -> str:
        return toolset.call(name, dict(arguments or {}), context)

    servers = ", ".join(toolset.servers)
    return [
        StructuredTool.from_function(
            func=find_tools,
            name=FIND_TOOLS_NAME,
            args_schema=FindToolsArgs,
            description=f"Search the {len(toolset.specs)} tools of the MCP servers ({servers}) "
            "and return the schemas of those matching the query.",
        ),
        StructuredTool.from_function(
            func=call_tool,
            name=CALL_TOOL_NAME,
            args_schema=CallToolArgs,
            description="Call an MCP server tool found with find_tools, by its name, with "
            "arguments matching its schema.",
        ),
    ]


def schema_tokens(tools: list[BaseTool], count: Callable[[str], int]) -> int:
    """Return the tokens the tools' schemas take in a request (as the budget counts them)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return sum(
        count(json.dumps(convert_to_openai_tool(t), ensure_ascii=False, sort_keys=True))
        for t in tools
    )


def mcp_tools(toolset: McpToolset, context: Context, count: Callable[[str], int]) -> list[BaseTool]:
    """Return the MCP tools to bind: each one, or ``find_tools`` + ``call_tool`` past the share."""
    if not toolset.specs:
        return []
    direct = [_direct_tool(n, s, toolset, context) for n, s in toolset.specs.items()]
    if schema_tokens(direct, count) <= MCP_SCHEMA_SHARE * context.context_window:
        return direct
    return _search_tools(toolset, context)
