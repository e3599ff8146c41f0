"""Node ``run_tools``: execute the model's tool calls and return wrapped, paired results."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.state import State
from engram.graph.tools.available_tools import build_tools
from engram.graph.tools.save_memory_tool import SAVE_MEMORY_TOOL
from engram.graph.tools.tool_output import TOOL_ERRORS, deliver_tool_output, tool_error_text
from engram.graph.tools.tool_timeout import call_with_timeout
from engram.nodes.node_support import current_thread_id, record_messages
from engram.stores.spill import session_spill_folder

__all__ = ["TRUSTED_TOOLS", "run_tools", "untrusted_of"]

TRUSTED_TOOLS: frozenset[str] = frozenset({SAVE_MEMORY_TOOL})
"""Tools whose results are engram's own words; every other result (project files, search
output, MCP) is untrusted content."""


def untrusted_of(calls: list[Any]) -> list[str]:
    """Return the names of the tools among ``calls`` whose results are untrusted content."""
    return list(dict.fromkeys(c["name"] for c in calls if c["name"] not in TRUSTED_TOOLS))


async def _run_one(
    tool: BaseTool | None, call: dict[str, Any], timeout_s: float
) -> tuple[str, bool]:
    """Return (output text, failed) for one tool call; failures go back to the model."""
    if tool is None:
        return f"error: unknown tool {call['name']!r}", True
    args = call.get("args") or {}
    try:
        result = await call_with_timeout(tool.name, lambda: tool.invoke(args), timeout_s)
    except TOOL_ERRORS as exc:
        return tool_error_text(exc), True
    return str(result), False


async def run_tools(state: State, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Run every tool call of the last assistant message, one tool message per call id."""
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ValueError("run_tools was reached without pending tool calls")
    session = current_thread_id()
    # Calls of one step run together: a save sees only the results of earlier steps.
    available = build_tools(runtime.context, deps, runtime.store,
                            spill_folder=session_spill_folder(session),
                            after=state.untrusted_sources)
    tools = {t.name: t for t in available}
    calls = list(last.tool_calls)
    timeout_s = runtime.context.tool_timeout_s
    outcomes = await asyncio.gather(
        *(_run_one(tools.get(c["name"]), dict(c), timeout_s) for c in calls)
    )
    results: list[ToolMessage] = []
    notes: list[str] = []
    for call, (raw, failed) in zip(calls, outcomes, strict=True):
        text, note = deliver_tool_output(
            runtime.context.project_path, call["name"], str(call["id"]), raw, session=session
        )
        notes.extend([note] if note else [])
        results.append(
            ToolMessage(
                content=text,
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
