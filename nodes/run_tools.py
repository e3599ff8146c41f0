"""Node ``run_tools``: execute the model's tool calls and return wrapped, paired results."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import ValidationError

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.errors import EngramError
from engram.graph.state import State
from engram.graph.tools.available_tools import build_tools
from engram.graph.tools.project_tools import wrap_tool_result
from engram.graph.tools.save_memory_tool import SAVE_MEMORY_TOOL
from engram.nodes.node_support import record_messages
from engram.stores.errors import StoreError
from engram.stores.spill import spill_if_large

__all__ = ["TRUSTED_TOOLS", "run_tools", "untrusted_of"]

TRUSTED_TOOLS: frozenset[str] = frozenset({SAVE_MEMORY_TOOL})
"""Tools whose results are engram's own words; every other result (project files, search
output, MCP) is untrusted content."""


def untrusted_of(calls: list[Any]) -> list[str]:
    """Return the names of the tools among ``calls`` whose results are untrusted content."""
    return list(dict.fromkeys(c["name"] for c in calls if c["name"] not in TRUSTED_TOOLS))


async def _run_one(tool: BaseTool | None, call: dict[str, Any]) -> tuple[str, bool]:
    """Return (output text, failed) for one tool call; failures go back to the model."""
    if tool is None:
        return f"error: unknown tool {call['name']!r}", True
    try:
        result = await tool.ainvoke(call.get("args") or {})
    except (EngramError, StoreError, ValidationError, OSError, ValueError) as exc:
        hint = getattr(exc, "hint", "")
        return f"error: {exc}" + (f"\nhint: {hint}" if hint else ""), True
    return str(result), False


async def run_tools(state: State, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Run every tool call of the last assistant message, one tool message per call id."""
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ValueError("run_tools was reached without pending tool calls")
    # Calls of one step run together: a save sees only the results of earlier steps.
    tools = {t.name: t for t in build_tools(runtime.context, deps, runtime.store,
                                            after=state.untrusted_sources)}
    calls = list(last.tool_calls)
    outcomes = await asyncio.gather(*(_run_one(tools.get(c["name"]), dict(c)) for c in calls))
    results: list[ToolMessage] = []
    notes: list[str] = []
    for call, (raw, failed) in zip(calls, outcomes, strict=True):
        try:
            text = spill_if_large(
                runtime.context.project_path, call["name"], str(call["id"]), raw
            ).text
        except OSError as exc:
            notes.append(f"could not save a large {call['name']} output: {exc}")
            text = raw
        results.append(
            ToolMessage(
                content=wrap_tool_result(call["name"], text),
                tool_call_id=call["id"],
                name=call["name"],
                status="error" if failed else "success",
            )
        )
    await record_messages(runtime.context, list(results))
    return {
        "messages": results,
        "tool_errors": state.tool_errors + sum(1 for _, failed in outcomes if failed),
        "external_content_seen": bool(untrusted_of(calls)),
        "untrusted_sources": untrusted_of(calls),
        "notes": notes,
    }
