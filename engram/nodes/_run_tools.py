"""Node ``run_tools``: execute the model's tool calls and return wrapped, paired results."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from engram.graph import ActionReview, Context, Deps, State, StateUpdate, find_sandbox
from engram.graph.tools import (
    COMMAND_TOOL_NAME,
    SAVE_MEMORY_TOOL,
    TOOL_ERRORS,
    ActionSnapshots,
    action_kind,
    build_tools,
    call_with_timeout,
    command_time_limit,
    deliver_tool_output,
    malformed_reason,
    reads_code,
    tool_error_text,
)
from engram.nodes._support import current_thread_id, record_messages
from engram.stores.files import session_spill_folder

TRUSTED_TOOLS: frozenset[str] = frozenset({SAVE_MEMORY_TOOL})
"""Tools whose results are engram's own words; every other result (project files, search
output, MCP) is untrusted content."""
NOT_REVIEWED = "error: this action was not reviewed, so it did not run"


def untrusted_of(calls: list[Any]) -> list[str]:
    """Return the names of the tools among ``calls`` whose results are untrusted content."""
    return list(dict.fromkeys(c["name"] for c in calls if c["name"] not in TRUSTED_TOOLS))


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


def _rejected(review: ActionReview) -> CallOutcome:
    reason = str(review.get("reason") or "").strip() or "no reason given"
    return CallOutcome(
        f"rejected by the user: {reason}\nNothing was changed or run. Take the "
        "reason into account; do not retry the same action unchanged.",
        refused=True,
    )


async def _run_one(
    tool: BaseTool | None, call: dict[str, Any], review: ActionReview | None, timeout_s: float
) -> CallOutcome:
    """Run one tool call as reviewed; failures go back to the model as text."""
    if tool is None:
        return CallOutcome(f"error: unknown tool {call['name']!r}", failed=True)
    if call.get("malformed"):
        return CallOutcome(str(call["malformed"]), failed=True)
    args = dict(call.get("args") or {})
    prefix = ""
    if action_kind(call["name"]) is not None:
        if review is None:
            return CallOutcome(NOT_REVIEWED, failed=True)
        if review["action"] == "reject":
            return _rejected(review)
        if review["action"] == "edit":
            args.update(review.get("args") or {})
            prefix = (
                "the user edited your proposal before it ran; it ran with "
                f"{json.dumps(review.get('args'), ensure_ascii=False)[:2000]}\n"
            )
    if call["name"] == COMMAND_TOOL_NAME:  # a command has its own, longer, time limit
        timeout_s = max(timeout_s, command_time_limit(args))
    tool_call = {"name": call["name"], "args": args, "id": call["id"], "type": "tool_call"}
    try:
        message = await call_with_timeout(tool.name, lambda: tool.invoke(tool_call), timeout_s)
    except TOOL_ERRORS as exc:
        return CallOutcome(prefix + tool_error_text(exc), failed=True)
    content = message.content if isinstance(message, ToolMessage) else message
    artifact = getattr(message, "artifact", None)
    changed = [str(p) for p in artifact] if isinstance(artifact, list) else []
    return CallOutcome(prefix + str(content), changed=changed)


def _will_act(call: dict[str, Any], review: ActionReview | None) -> bool:
    acts = review is not None and review["action"] != "reject"
    return acts and action_kind(call["name"]) is not None


async def _run_all(
    tools: dict[str, BaseTool],
    calls: list[dict[str, Any]],
    reviews: Mapping[str, ActionReview],
    timeout_s: float,
    snapshots: ActionSnapshots,
) -> list[CallOutcome]:
    """Run read-only batches together; a batch with an edit or command runs in order.

    Each edit or command that runs is bracketed by snapshots of the working tree.
    """
    if not any(action_kind(c["name"]) is not None for c in calls):
        return list(
            await asyncio.gather(
                *(
                    _run_one(tools.get(c["name"]), c, reviews.get(str(c["id"])), timeout_s)
                    for c in calls
                )
            )
        )
    outcomes: list[CallOutcome] = []
    for call in calls:
        review = reviews.get(str(call["id"]))
        acts = _will_act(call, review)
        before = await asyncio.to_thread(snapshots.before) if acts else None
        try:
            outcomes.append(await _run_one(tools.get(call["name"]), call, review, timeout_s))
        except asyncio.CancelledError:  # Ctrl-C: what the stopped command changed stays undoable
            if acts:
                snapshots.after(call["name"], before)  # blocking: the loop is stopping anyway
            raise
        if acts:
            await asyncio.to_thread(snapshots.after, call["name"], before)
    return outcomes


def _tool_messages(
    context: Context, calls: list[Any], outcomes: list[CallOutcome], session: str
) -> tuple[list[ToolMessage], list[str]]:
    """Spill large outputs and wrap each result as untrusted data (blocking: writes files)."""
    results: list[ToolMessage] = []
    notes: list[str] = []
    for call, outcome in zip(calls, outcomes, strict=True):
        text, note = deliver_tool_output(
            context.state,
            call["name"],
            str(call["id"]),
            outcome.text,
            session=session,
            code=reads_code(call["name"], call.get("args") or {}),
        )
        notes.extend([note] if note else [])
        results.append(
            ToolMessage(
                content=text,
                tool_call_id=call["id"],
                name=call["name"],
                status="error" if outcome.failed or outcome.refused else "success",
            )
        )
    return results, notes


async def run_tools(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Run every tool call of the last assistant message, one tool message per call id.

    Edits and commands run only as ``review_actions`` decided: approved, edited by the user,
    or rejected (the reason goes back to the model as the tool's result).
    """
    last = state.messages[-1] if state.messages else None
    if not isinstance(last, AIMessage) or not last.tool_calls:
        raise ValueError("run_tools was reached without pending tool calls")
    session = current_thread_id()
    # Calls of one step run together: a save sees only the results of earlier steps.
    # Building the tools and delivering their outputs touch the file system: off the loop.
    available = await asyncio.to_thread(
        build_tools,
        runtime.context,
        deps,
        runtime.store,
        spill_folder=session_spill_folder(session),
        after=state.untrusted_sources,
    )
    tools = {t.name: t for t in available}
    calls: list[dict[str, Any]] = [dict(c) for c in last.tool_calls]
    for call in calls:
        call["malformed"] = malformed_reason(last, str(call["id"]))
    info = runtime.execution_info
    # resolving the project path may read the working folder: off the loop too
    project_state = await asyncio.to_thread(lambda: runtime.context.state)
    snapshots = ActionSnapshots(project_state, session, info.checkpoint_id if info else None)
    outcomes = await _run_all(
        tools, calls, state.action_reviews, runtime.context.tool_timeout_s, snapshots
    )
    results, notes = await asyncio.to_thread(
        _tool_messages, runtime.context, calls, outcomes, session
    )
    await record_messages(runtime.context, list(results))
    return {
        "messages": results,
        "tool_errors": state.tool_errors + sum(1 for o in outcomes if o.failed),
        "external_content_seen": bool(untrusted_of(calls)),
        "untrusted_sources": untrusted_of(calls),
        # a command's changes count too, so the checks run after a fix made by `sed` or `rm`
        "files_changed": list(
            dict.fromkeys([p for o in outcomes for p in o.changed] + snapshots.command_changes)
        ),
        "action_reviews": {},
        "blocked": [
            {"tool": call["name"], "call_id": str(call["id"]), "reason": _reason(state, call)}
            for call, outcome in zip(calls, outcomes, strict=True)
            if outcome.refused
        ],
        "notes": notes + snapshots.notes + _sandbox_note(runtime.context, calls),
    }


def _sandbox_note(context: Context, calls: list[dict[str, Any]]) -> list[str]:
    """Say (once a turn: notes are kept unique) that a command ran without a sandbox."""
    if context.sandbox != "auto" or not any(
        action_kind(c["name"]) in ("command", "mcp") for c in calls
    ):
        return []
    sandbox = find_sandbox("auto")
    if sandbox.kind != "none":
        return []
    return [f"commands run without a sandbox ({sandbox.reason}); approval is the only guard"]


def _reason(state: State, call: dict[str, Any]) -> str:
    review: Mapping[str, Any] = state.action_reviews.get(str(call["id"])) or {}
    return str(review.get("reason") or "").strip() or "no reason given"
