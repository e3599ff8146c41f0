"""``engram mcp``: the context engine as a stdio MCP server (a composition root).

Other agents get engram's tools — exact search, reads, semantic search, the relation index, the
memory — without a model of engram's own. Tool errors come back as MCP tool errors that carry
their reason; every call has the run's tool time limit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import subprocess
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from engram.graph import Context, Deps, EngramError, fact_memory_opener
from engram.stores import StoreError
from engram.stores.project import memory_key

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore
    from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
    from mcp.server.mcpserver import MCPServer

    from engram.graph.tools import ToolFunction

# The MCP library is imported when the server is built; the memory store (LangGraph's SQLite
# store) opens and the indexes (Chroma, tree-sitter, NetworkX) load in the background once it
# is built; the graph (LangChain, LangGraph) is built on the first ``build_context``. A client
# gets its tool list without waiting for any of them.

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "engram gives coding agents the right context for a project: search exactly first "
    "(grep_code, glob_files, read_file), then semantic search and the relation index when exact "
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

    from engram.graph.tools import call_with_timeout

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
    context: Context,
    deps: Deps,
    ready: threading.Event | None = None,
    *,
    memory: Callable[[], BaseStore] | None = None,
    middleware: Sequence[ServerMiddleware[Any]] = (),
) -> MCPServer:
    """Return an MCP server exposing engram's tools for the project in ``context``.

    Tools other than the exact ones (read, glob, grep) wait for ``ready`` before they run.
    ``memory`` returns the memory store when a memory tool is called (waiting for it to open);
    without it the tools use ``deps.store``. ``middleware`` wraps every inbound message.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

    from engram.graph.tools import CORE_TOOL_NAMES, save_memory_function, tool_functions

    server: MCPServer = MCPServer(name="engram", instructions=INSTRUCTIONS, middleware=middleware)
    tools = tool_functions(context, deps, after=(MCP_CALLER,))  # no actions: no approval
    if memory is not None and deps.store is None:
        tools.append(save_memory_function(context, memory, after=(MCP_CALLER,)))
    for tool in tools:
        waits = None if tool.name in CORE_TOOL_NAMES else ready
        server.add_tool(
            _callable(tool, context.tool_timeout_s, waits),
            name=tool.name,
            description=tool.description,
        )
    graphs: list[Any] = []  # the compiled graph, built by the first build_context
    graph_lock = threading.Lock()

    def context_graph() -> Any:
        from engram.builder import build_graph

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
            raise MCPToolError(
                f"build_context did not finish within {context.tool_timeout_s:g} s"
            ) from None
        pack = state.get("context_pack") or {}
        notes = "".join(f"\nnote: {note}" for note in pack.get("notes", []))
        return str(pack.get("text", "")) + notes

    async def search_memory(query: str, k: int = 10) -> str:
        """Search the long-term facts visible in this project (global and project scope).

        Args:
            query: What to look for.
            k: Most facts to return.
        """
        if ready is not None:  # after the background load: a module imported by two threads
            # at once can be seen half-initialised (NumPy raises)
            await asyncio.to_thread(ready.wait)
        try:
            store = deps.store if memory is None else memory()
        except EXPECTED_FAILURES as exc:
            raise MCPToolError(f"the memory store is not open: {exc}") from None
        from engram.graph import count_text, escape_markers
        from engram.stores.memory import recall_facts

        if store is None:
            raise MCPToolError("no memory store is configured")
        recall = recall_facts(
            store,
            query,
            project_key=memory_key(context.project_path, context.home_path),
            window=context.context_window,
            count_tokens=count_text,
            now=datetime.now(UTC),
            k=max(1, min(k, 50)),
        )
        return escape_markers(recall.block) or "no matching facts"

    server.add_tool(build_context)
    server.add_tool(search_memory)
    return server


def start_after_listing(start: Callable[[], None]) -> ServerMiddleware[Any]:
    """Return MCP middleware that calls ``start`` after the first tool list, or before a call.

    Starting the background load (imports, the store, the indexes) while the server answers
    its first requests would make the client wait for the tool list: on a busy machine the
    load takes the interpreter from the server's own thread. ``start`` must be idempotent.
    """

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call":
            start()  # a client that calls before it lists: what the tool waits for is coming
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            start()
        return result

    return middleware


def _index_on_first_use(context: Context) -> None:
    """Index a project never indexed before the tools that search it answer (as ``context``).

    Progress goes to stderr (stdout is the protocol's); a failure is logged and the tools
    answer without the index, as before.
    """
    from engram.cli._auto_index import ensure_index

    try:
        ensure_index(context)
    except EXPECTED_FAILURES as exc:
        log.error("engram mcp: the project was not indexed: %s", exc)


def serve_stdio(context: Context) -> None:
    """Serve over stdin/stdout until the client disconnects, opening what the tools need meanwhile.

    Once the client has the tool list (or calls a tool first), the memory store opens and the
    project's indexes load in a background thread (a project never indexed is indexed first,
    see ``engram.cli._auto_index``); the tools that use them wait, the exact ones answer at
    once. A store that cannot open is logged and reported by the memory tools.
    """
    from engram.graph import make_default_deps

    deps = make_default_deps()
    memory: Future[BaseStore] = Future()
    ready = threading.Event()
    with ExitStack() as opened:

        def load() -> None:
            from engram.cli._runtime import open_store
            from engram.graph.retrieval import preload

            try:
                try:
                    store = opened.enter_context(open_store(context))
                except BaseException as exc:
                    memory.set_exception(exc)
                    if not isinstance(exc, EXPECTED_FAILURES):
                        raise
                    log.error("engram mcp: the memory store did not open: %s", exc)
                else:
                    deps.store = store
                    deps.open_fact_memory = fact_memory_opener(store)
                    memory.set_result(store)
                _index_on_first_use(context)
                preload(deps, context)
            finally:
                ready.set()

        loader = threading.Thread(target=load, name="mcp-preload", daemon=True)

        def start_load() -> None:
            if loader.ident is None:  # not started yet (only the server's thread calls this)
                loader.start()

        server = build_mcp_server(
            context, deps, ready, memory=memory.result, middleware=[start_after_listing(start_load)]
        )
        try:
            asyncio.run(server.run_stdio_async())
        finally:
            if loader.ident is not None:  # else the client left before listing: nothing opened
                wait([memory])  # the store closes with ``opened``, not while it is opening
