"""Node ``compact_history``: tier 3, summarize older history as a validated transaction."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    KEEP_USER_TURNS,
    Context,
    Deps,
    State,
    StateUpdate,
    count_text,
    reconcile,
    request_for,
    summary_budget,
    thresholds,
)
from engram.graph.compaction import compact_now
from engram.graph.tools import build_tools
from engram.nodes._support import current_thread_id
from engram.stores import Ledger

SUMMARY_CHARS_PER_TOKEN = 3
"""Characters per token assumed when turning the summary token budget into a length cap
(low on purpose: summaries quote paths, commands and CJK text)."""


async def compact_history(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Replace the history before the 3rd-last user turn with a four-section summary.

    The summary comes from the run's model (its instruction appended after the unchanged
    history, same tools bound, so the cached prefix is reused) or, without a model or when it
    fails, from the extractive summarizer. The new history is committed only when valid and
    smaller; otherwise the original stays. Either way the attempt is logged in
    ``compaction_log`` and the project ledger.
    """
    context = runtime.context
    count = deps.count_tokens or count_text
    # Building the tools and the model touches the file system: off the event loop.
    tools = await asyncio.to_thread(build_tools, context, deps, runtime.store)
    model = await asyncio.to_thread(deps.model_factory, context)
    request = request_for(state, tools, count)
    result = await compact_now(
        state.messages,
        keep_users=KEEP_USER_TURNS,
        model=model,
        request=request,
        tools=tools,
        summary_chars=summary_budget(context.context_window) * SUMMARY_CHARS_PER_TOKEN,
    )
    users = sum(1 for m in result.messages if isinstance(m, HumanMessage))
    event = result.event()
    event["user_turns"] = users
    thread = current_thread_id()
    await asyncio.to_thread(
        lambda: Ledger.for_project(context.project_path, context.home_path).append(
            thread, "compaction", event
        )
    )
    limits = thresholds(context.context_window)
    reported = state.last_usage.get("input") if state.last_usage else None
    estimate = reconcile(result.tokens_after, reported, state.budget.get("raw_estimate"))
    update: StateUpdate = {
        "compaction_log": [event],
        "budget": {
            **state.budget,
            "estimate": estimate if result.committed else state.budget.get("estimate", 0),
            "raw_estimate": result.tokens_after if result.committed else result.tokens_before,
            "decision": "ok" if estimate < limits.trigger or not result.committed else "summarize",
        },
    }
    if result.usage.get("calls"):
        update["usage"] = dict(result.usage)
    if result.committed:
        update["messages"] = result.update()
    else:
        update["notes"] = [f"compaction rolled back: {result.reason}"]
    return update
