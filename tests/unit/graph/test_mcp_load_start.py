"""The MCP server starts its background load once the client has the tool list, or at a call."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engram.cli._mcp_server import start_after_listing


async def _handle(events: list[str], method: str, request_id: int | None = 1) -> None:
    async def call_next(ctx: Any) -> dict[str, str]:
        events.append(f"answer {ctx.method}")
        return {}

    middleware = start_after_listing(lambda: events.append("start"))
    await middleware(SimpleNamespace(method=method, request_id=request_id), call_next)


async def test_the_handshake_answers_before_the_load_starts():
    events: list[str] = []
    await _handle(events, "server/discover")
    await _handle(events, "initialize")
    await _handle(events, "notifications/initialized", request_id=None)
    await _handle(events, "ping")
    assert "start" not in events


async def test_the_load_starts_after_the_tool_list_is_answered():
    events: list[str] = []
    await _handle(events, "tools/list")
    assert events == ["answer tools/list", "start"]


@pytest.mark.parametrize("listed_first", [False, True])
async def test_a_tool_call_starts_the_load_before_it_runs(listed_first: bool):
    events: list[str] = []
    if listed_first:
        await _handle(events, "tools/list")
        events.clear()
    await _handle(events, "tools/call")
    assert events == ["start", "answer tools/call"]
