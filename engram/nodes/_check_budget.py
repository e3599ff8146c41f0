"""Node ``check_budget``: estimate the next request, clear old tool results, flag a summary."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    KEEP_RECENT_TOOL_RESULTS,
    BudgetReport,
    Context,
    Deps,
    State,
    StateUpdate,
    clear_minimum,
    count_text,
    decide,
    reconcile,
    request_for,
    thresholds,
)
from engram.graph.compaction import clear_pass
from engram.graph.tools import build_tools
from engram.nodes._support import current_thread_id
from engram.stores import Ledger

STUCK_NOTE = (
    "context is over the compaction trigger but the last summary attempt was rolled back; "
    "it is retried after the next user turn"
)


def _user_turns(state: State) -> int:
    return sum(1 for m in state.messages if isinstance(m, HumanMessage))


def _summary_blocked(state: State) -> bool:
    """Return True when the last summary attempt failed and no user turn came since."""
    for event in reversed(state.compaction_log):
        if event.get("tier") == "summarize":
            return event.get("status") == "rolled_back" and event.get("user_turns") == _user_turns(
                state
            )
    return False


def check_budget(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Estimate the next request and apply tier 2 (clear) when past the clearing threshold.

    The estimate covers system prompt, tool schemas, messages and the turn context still to be
    appended, reconciled with the provider's last reported input tokens. Clearing is written
    to state, so it never re-fires on the same messages; ``decision`` is "summarize" only when
    the estimate is still over the trigger afterwards.
    """
    context = runtime.context
    count = deps.count_tokens or count_text
    limits = thresholds(context.context_window)
    request = request_for(state, build_tools(context, deps, runtime.store), count)
    reported = state.last_usage.get("input") if state.last_usage else None
    previous = state.budget.get("raw_estimate")

    raw = request.estimate(state.messages)
    estimate = reconcile(raw, reported, previous)
    decision = decide(estimate, limits)
    update: StateUpdate = {}
    if decision != "ok":
        cleared = clear_pass(
            state.messages,
            request,
            min_saving=clear_minimum(estimate, raw, limits),
            keep_recent=KEEP_RECENT_TOOL_RESULTS,
        )
        if cleared.committed:
            raw = cleared.tokens_after
            estimate = reconcile(raw, reported, previous)
            event = cleared.event()
            update["messages"] = cleared.update()
            update["compaction_log"] = [event]
            Ledger.for_project(context.project_path, context.home_path).append(
                current_thread_id(), "compaction", event
            )
        if decide(estimate, limits) != "summarize":
            decision = "clear" if cleared.committed else "ok"
        elif _summary_blocked(state):
            decision = "clear" if cleared.committed else "ok"
            update["notes"] = [STUCK_NOTE]
        else:
            decision = "summarize"
    update["budget"] = BudgetReport(
        estimate=estimate,
        raw_estimate=raw,
        window=limits.window,
        trigger=limits.trigger,
        clear=limits.clear,
        memory_cap=limits.memory_cap,
        decision=decision,
        reported_input=reported or 0,
    )
    return update
