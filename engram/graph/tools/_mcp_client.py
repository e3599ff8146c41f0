"""Talk to configured MCP servers (stdio, streamable HTTP or SSE): list their tools, call one.

Each call opens its own session (a stdio server is started and stopped): no process outlives
a step, a crashed server costs one failed call, and nothing is bound to an event loop that a
later step, thread or LangGraph worker does not own. The listing is cached per project by ``Deps``.
The MCP library is imported here only when a server is used (CLI start-up never pays).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from engram.graph._errors import ToolError
from engram.stores.project import McpServer

if TYPE_CHECKING:
    from mcp.client.client import Client

Wrap = Callable[[list[str]], list[str]]
"""Turns a server's command line into the one to start (the sandbox's)."""

T = TypeVar("T")

LIST_TIMEOUT_S = 30.0
"""How long a server may take to start and list its tools before it is left out."""


@dataclass(frozen=True)
class McpToolSpec:
    """One tool a server offers, as the model will see it."""

    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]


def run_blocking(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, whatever loop the caller is in.

    A fresh thread owns a fresh event loop, so a caller inside a running loop (a LangGraph
    server's worker) cannot deadlock or be handed the MCP client's anyio task groups.
    """

    async def main() -> T:
        return await factory()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp") as pool:
        return pool.submit(asyncio.run, main()).result()


@asynccontextmanager
async def _session(
    server: McpServer, root: Path, log_dir: Path, wrap: Wrap = list
) -> AsyncIterator[Client]:
    """Open a client session with ``server`` for one step (stderr of stdio servers to a log).

    A stdio server's command line goes through ``wrap`` (the run's sandbox) before it starts.
    """
    from mcp.client.client import Client

    if server.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = wrap([server.command, *server.args])
        params = StdioServerParameters(
            command=argv[0],
            args=argv[1:],
            env=dict(server.env) or None,
            cwd=str(root),
        )
        with ExitStack() as stack:
            async with Client(
                stdio_client(params, errlog=_errlog(stack, log_dir, server.name))
            ) as client:
                yield client
    elif server.transport == "sse":
        from mcp.client.sse import sse_client

        async with Client(sse_client(server.url, headers=dict(server.headers))) as client:
            yield client
    else:
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

        async with (
            create_mcp_http_client(headers=dict(server.headers)) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            yield client


def _errlog(stack: ExitStack, log_dir: Path, server: str) -> TextIO:
    """Open where the server's stderr goes (its log under ENGRAM_HOME, else nowhere)."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        return stack.enter_context((log_dir / f"mcp-{server}.log").open("a", encoding="utf-8"))
    except OSError:
        return stack.enter_context(Path(os.devnull).open("w", encoding="utf-8"))


async def _list_one(server: McpServer, root: Path, log_dir: Path, wrap: Wrap) -> list[McpToolSpec]:
    async with _session(server, root, log_dir, wrap) as client:
        specs: list[McpToolSpec] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            specs += [
                McpToolSpec(
                    server.name,
                    t.name,
                    t.description or "",
                    dict(t.input_schema or {"type": "object"}),
                )
                for t in page.tools
            ]
            cursor = page.next_cursor
            if not cursor:
                return specs


def list_server_tools(
    servers: list[McpServer],
    root: Path,
    log_dir: Path,
    timeout_s: float = LIST_TIMEOUT_S,
    *,
    wrap: Wrap = list,
) -> tuple[list[McpToolSpec], list[str]]:
    """Return every server's tools, all servers asked at once, and a note per failed server."""

    async def one(server: McpServer) -> list[McpToolSpec] | str:
        try:
            return await asyncio.wait_for(_list_one(server, root, log_dir, wrap), timeout_s)
        except TimeoutError:
            return (
                f"MCP server {server.name!r} did not list its tools within {timeout_s:g} s; "
                f"its tools are left out (see {log_dir}/mcp-{server.name}.log)"
            )
        except Exception as exc:  # a server is someone else's program: any failure is a note
            return (
                f"MCP server {server.name!r} ({server.where}) could not start or list "
                f"its tools: {_reason(exc)}; its tools are left out (fix {server.source})"
            )

    async def everyone() -> list[list[McpToolSpec] | str]:
        return list(await asyncio.gather(*(one(s) for s in servers)))

    results = run_blocking(everyone) if servers else []
    specs = [s for r in results if not isinstance(r, str) for s in r]
    return specs, [r for r in results if isinstance(r, str)]


def _reason(exc: BaseException) -> str:
    """Return the innermost message of an error (task groups wrap them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _result_text(result: Any) -> str:
    """Return a tool result's content as text (non-text parts are named, not inlined)."""
    parts: list[str] = []
    for item in result.content:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            mime = getattr(item, "mime_type", None) or ""
            parts.append(f"[{getattr(item, 'type', 'content')} {mime}]".replace(" ]", "]"))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def call_server_tool(
    server: McpServer,
    tool: str,
    arguments: dict[str, Any],
    root: Path,
    log_dir: Path,
    *,
    wrap: Wrap = list,
) -> str:
    """Open a session with ``server``, call ``tool`` with ``arguments``, return the result's text.

    Raises:
        ToolError: The server could not be reached or reported the call as failed.
    """

    async def call() -> Any:
        async with _session(server, root, log_dir, wrap) as client:
            return await client.call_tool(tool, arguments)

    try:
        result = run_blocking(call)
    except Exception as exc:  # the server's failure goes back to the model as a tool error
        raise ToolError(f"MCP server {server.name!r} failed on {tool}: {_reason(exc)}") from None
    text = _result_text(result)
    if result.is_error:
        raise ToolError(f"{server.name}__{tool} reported an error: {text}")
    return text
