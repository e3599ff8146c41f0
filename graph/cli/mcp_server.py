"""``engram mcp``: the context engine as a stdio MCP server (a composition root).

Other agents get engram's tools — exact search, reads, semantic search, the code graph, the
memory — without a model of engram's own. Tool errors come back as MCP tool errors that carry
their reason; every call has the run's tool time limit.
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.errors import EngramError
from engram.stores.errors import StoreError
from engram.stores.project_key import project_key

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from engram.graph.tools.tool_function import ToolFunction

# The MCP library is imported when the server is built; the graph, the memory and the indexes
# (LangChain, LangGraph, Chroma, tree-sitter) when a tool that needs them is first called, so
# a client gets its tool list without waiting for them.

__all__ = ["INSTRUCTIONS", "build_mcp_server"]

INSTRUCTIONS = (
    "engram gives coding agents the right context for a project: search exactly first "
    "(grep_code, glob_files, read_file), then semantic search and the code graph when exact "
    "search is not enough."
)
MCP_CALLER = "an MCP client"
"""What an MCP caller's saves record as read before: a calling agent has read who knows what,
so its ``save_memory`` facts are quarantined until a person confirms them."""


EXPECTED_FAILURES = (EngramError, StoreError, OSError, ValueError, subprocess.TimeoutExpired)
"""Failures a tool call can meet on a real project; their reason goes back to the client."""


def _callable(
    tool: ToolFunction, timeout_s: float, ready: threading.Event | None = None
) -> Callable[..., Any]:
    """Return the function behind a tool, time-limited (its signature is the schema).

    A call first waits for ``ready`` (the project's indexes loading), outside its time limit:
    a client that started the server waits for the load as it would have before serving.

    The MCP library reports any exception other than its own ``ToolError`` as a bare "Error
    executing tool", so expected failures are turned into one with their reason and hint.
    """
    from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

    from engram.graph.tools.tool_timeout import call_with_timeout

    func = tool.func

    @functools.wraps(func)
    async def call(*args: Any, **kwargs: Any) -> Any:
        if ready is not None:
            await asyncio.to_thread(ready.wait)
        try:
            return await call_with_timeout(tool.name, lambda: func(*args, **kwargs), timeout_s)
        except EXPECTED_FAILURES as exc:
            hint = getattr(exc, "hint", "")
            raise MCPToolError(f"{exc}" + (f" ({hint})" if hint else "")) from None

    return call


def build_mcp_server(
    context: Context, deps: Deps, ready: threading.Event | None = None
) -> MCPServer:
    """Return an MCP server exposing engram's tools for the project in ``context``.

    Tools other than the exact ones (read, glob, grep) wait for ``ready`` before they run.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

    from engram.graph.tools.available_tools import tool_functions
    from engram.graph.tools.project_tools import CORE_TOOL_NAMES

    server: MCPServer = MCPServer(name="engram", instructions=INSTRUCTIONS)
    for tool in tool_functions(context, deps, after=(MCP_CALLER,)):  # no actions: no approval
        waits = None if tool.name in CORE_TOOL_NAMES else ready
        server.add_tool(_callable(tool, context.tool_timeout_s, waits), name=tool.name,
                        description=tool.description)
    graphs: list[Any] = []  # the compiled graph, built by the first build_context
    graph_lock = threading.Lock()

    def context_graph() -> Any:
        from engram.graph.builder import build_graph

        with graph_lock:
            if not graphs:
                graphs.append(build_graph(deps, store=deps.store))
            return graphs[0]

    async def build_context(task: str, budget: int = 0) -> str:
        """Assemble the budgeted context pack for a task: rules, memory, code map, slices.

        Args:
            task: What the calling agent is about to do, in its own words.
            budget: Pack budget in tokens; 0 derives it from the context window.
        """
        from langchain_core.messages import HumanMessage

        if ready is not None:
            await asyncio.to_thread(ready.wait)
        graph = await asyncio.to_thread(context_graph)
        run = context.replace(mode="context", auto_approve=True, budget=max(0, budget))
        config = {"configurable": {"thread_id": f"mcp-{uuid.uuid4().hex[:12]}"}}
        try:
            state = await asyncio.wait_for(
                graph.ainvoke({"messages": [HumanMessage(content=task)]}, config, context=run),
                context.tool_timeout_s,
            )
        except TimeoutError:
            raise MCPToolError(f"build_context did not finish within "
                               f"{context.tool_timeout_s:g} s") from None
        pack = state.get("context_pack") or {}
        notes = "".join(f"\nnote: {note}" for note in pack.get("notes", []))
        return str(pack.get("text", "")) + notes

    def search_memory(query: str, k: int = 10) -> str:
        """Search the long-term facts visible in this project (global and project scope).

        Args:
            query: What to look for.
            k: Most facts to return.
        """
        from engram.graph.markers import escape_markers
        from engram.graph.tokens import count_text
        from engram.stores.memory.fact_recall import recall_facts

        if deps.store is None:
            raise MCPToolError("no memory store is configured")
        recall = recall_facts(deps.store, query, project_key=project_key(context.project_path),
                              window=context.context_window, count_tokens=count_text,
                              now=datetime.now(UTC), k=max(1, min(k, 50)))
        return escape_markers(recall.block) or "no matching facts"

    server.add_tool(build_context)
    server.add_tool(search_memory)
    return server


def serve_stdio(context: Context, deps: Deps) -> None:
    """Serve over stdin/stdout until the client disconnects, loading the indexes meanwhile.

    The project's indexes load in the background from the start; the tools that use them wait
    for the load, the exact ones (and the tool list) answer at once.
    """
    ready = threading.Event()

    def load() -> None:
        from engram.graph.retrieval.preload import preload

        try:
            preload(deps, context)
        finally:
            ready.set()

    threading.Thread(target=load, name="mcp-preload", daemon=True).start()
    asyncio.run(build_mcp_server(context, deps, ready).run_stdio_async())
