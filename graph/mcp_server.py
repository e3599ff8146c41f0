"""``engram mcp``: the context engine as a stdio MCP server (a composition root).

Other agents get engram's tools — exact search, reads, semantic search, the code graph, the
memory — without a model of engram's own. Tool errors come back as MCP tool errors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from graph.context import Context
from graph.deps import Deps
from graph.errors import EngramError
from graph.toolset import build_tools
from stores.errors import StoreError

__all__ = ["INSTRUCTIONS", "build_mcp_server"]

INSTRUCTIONS = (
    "engram gives coding agents the right context for a project: search exactly first "
    "(grep_code, glob_files, read_file), then semantic search and the code graph when exact "
    "search is not enough."
)


def _callable(tool: BaseTool) -> Callable[..., Any]:
    """Return the plain function behind a LangChain tool (its signature becomes the schema)."""
    func = getattr(tool, "func", None)
    if func is None:
        raise TypeError(f"tool {tool.name} has no underlying function")

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (EngramError, StoreError) as exc:
            hint = getattr(exc, "hint", "")
            raise MCPToolError(f"{exc}" + (f" ({hint})" if hint else "")) from None

    return call


def build_mcp_server(context: Context, deps: Deps) -> MCPServer:
    """Return an MCP server exposing engram's tools for the project in ``context``."""
    server: MCPServer = MCPServer(name="engram", instructions=INSTRUCTIONS)
    for tool in build_tools(context, deps):
        server.add_tool(_callable(tool), name=tool.name, description=tool.description)
    return server


def serve_stdio(context: Context, deps: Deps) -> None:
    """Serve over stdin/stdout until the client disconnects."""
    asyncio.run(build_mcp_server(context, deps).run_stdio_async())
