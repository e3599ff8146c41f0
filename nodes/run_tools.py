"""Node ``run_tools``: execute the model's tool calls and return wrapped, paired results."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import ValidationError

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.errors import EngramError
from engram.graph.state import State
from engram.graph.tools.action_review import ACTION_KINDS
from engram.graph.tools.available_tools import build_tools
from engram.graph.tools.project_tools import wrap_tool_result
from engram.nodes.node_support import record_messages
from engram.stores.errors import StoreError
from engram.stores.spill import spill_if_large

__all__ = ["run_tools"]

EXTERNAL_TOOLS: frozenset[str] = frozenset()
"""Tools whose output comes from outside the project (web, MCP); none are built in yet."""
NOT_REVIEWED = "error: this action was not reviewed, so it did not run"


@dataclass
class CallOutcome:
    """What one tool call produced."""

    text: str
    failed: bool = False
    """The tool could not do what was asked (counts toward the task's failures)."""
    refused: bool = False
    """A human rejected the action: the model is told why; the task has not failed."""
    changed: list[str] = field(default_factory=list)
    """Project files the call changed."""


def _rejected(review: dict[str, Any]) -> CallOutcome:
    reason = str(review.get("reason") or "").strip() or "no reason given"
    return CallOutcome(f"rejected by the user: {reason}\nNothing was changed or run. Take the "
                   "reason into account; do not retry the same action unchanged.", refused=True)


async def _run_one(
    tool: BaseTool | None, call: dict[str, Any], review: dict[str, Any] | None
) -> CallOutcome:
    """Run one tool call as reviewed; failures go back to the model as text."""
    if tool is None:
        return CallOutcome(f"error: unknown tool {call['name']!r}", failed=True)
    args = dict(call.get("args") or {})
    prefix = ""
    if call["name"] in ACTION_KINDS:
        if review is None:
            return CallOutcome(NOT_REVIEWED, failed=True)
        if review["action"] == "reject":
            return _rejected(review)
        if review["action"] == "edit":
            args.update(review.get("args") or {})
            prefix = ("the user edited your proposal before it ran; it ran with "
                      f"{json.dumps(review.get('args'), ensure_ascii=False)[:2000]}\n")
    try:
        message = await tool.ainvoke(
            {"name": call["name"], "args": args, "id": call["id"], "type": "tool_call"})
    except (EngramError, StoreError, ValidationError, OSError, ValueError) as exc:
        hint = getattr(exc, "hint", "")
        return CallOutcome(prefix + f"error: {exc}" + (f"\nhint: {hint}" if hint else ""),
                       failed=True)
    content = message.content if isinstance(message, ToolMessage) else message
    artifact = getattr(message, "artifact", None)
    changed = [str(p) for p in artifact] if isinstance(artifact, list) else []
    return CallOutcome(prefix + str(content), changed=changed)


async def _run_all(
    tools: dict[str, BaseTool], calls: list[dict[str, Any]], reviews: dict[str, Any]
) -> list[CallOutcome]:
    """Run read-only batches concurrently; a batch with an action runs in the model's order."""
    jobs = [_run_one(tools.get(c["name"]), c, reviews.get(str(c["id"]))) for c in calls]
    if not any(c["name"] in ACTION_KINDS for c in calls):
        return list(await asyncio.gather(*jobs))
    return [await job for job in jobs]


async def run_tools(state: State, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Run every tool call of the last assistant message, one tool message per call id.

    Edits and commands run only as ``review_actions`` decided: approved, edited by the user,
    or rejected (the reason goes back to the model as the tool's result).
    """
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ValueError("run_tools was reached without pending tool calls")
    tools = {t.name: t for t in build_tools(runtime.context, deps, runtime.store)}
    calls: list[dict[str, Any]] = [dict(c) for c in last.tool_calls]
    outcomes = await _run_all(tools, calls, state.action_reviews)
    results: list[ToolMessage] = []
    notes: list[str] = []
    for call, outcome in zip(calls, outcomes, strict=True):
        try:
            text = spill_if_large(
                runtime.context.project_path, call["name"], str(call["id"]), outcome.text
            ).text
        except OSError as exc:
            notes.append(f"could not save a large {call['name']} output: {exc}")
            text = outcome.text
        results.append(
            ToolMessage(
                content=wrap_tool_result(call["name"], text),
                tool_call_id=call["id"],
                name=call["name"],
                status="error" if outcome.failed or outcome.refused else "success",
            )
        )
    await record_messages(runtime.context, list(results))
    return {
        "messages": results,
        "tool_errors": state.tool_errors + sum(1 for o in outcomes if o.failed),
        "external_content_seen": any(c["name"] in EXTERNAL_TOOLS for c in calls),
        "files_changed": [p for o in outcomes for p in o.changed],
        "action_reviews": {},
        "notes": notes,
    }
