"""Node ``retrieve_memory`` (Phase 0): profile the task and inject experience and facts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    ApprovalValue,
    Context,
    Deps,
    State,
    StateUpdate,
    count_text,
    escape_markers,
)
from engram.graph.profile import FactsRecaller, run_phase0
from engram.nodes._support import current_thread_id
from engram.stores import Ledger
from engram.stores.memory import FactStore, recall_facts


def _task_text(state: State) -> str:
    if state.task:
        return state.task
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            return message.content
    return ""


def retrieve_memory(
    state: State,
    runtime: Runtime[Context],
    *,
    deps: Deps,
    recall: FactsRecaller | None = recall_facts,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> StateUpdate:
    """Profile the task, then write the memory block and an account of what went into it.

    Args:
        state: Graph state; reads ``task`` (or the last user message).
        runtime: Run settings and the injected store.
        deps: Live handles; ``deps.store`` is used when the runtime has no store.
        recall: Facts recall function; None skips facts.
        clock: Current time (frozen in tests).
    """
    context = runtime.context
    store = runtime.store if runtime.store is not None else deps.store
    count = deps.count_tokens or count_text
    task = _task_text(state)
    if recall is recall_facts and store is not None:
        # A long-lived FactStore keeps its search index between turns (20× faster recall).
        cached = deps.fact_memory(context)
        if isinstance(cached, FactStore) and cached.store is store:
            recall = partial(recall_facts, facts=cached)
    result = run_phase0(store, task, context, count_tokens=count, now=clock(), recall=recall)
    approval: ApprovalValue = {}
    if result.profile.risk == "high" and context.auto_approve:
        approval = {"action": "approve", "approved": True, "constraints": "", "auto": True}
        Ledger.for_project(context.project_path, context.home_path).append(
            current_thread_id(), "approval", {**approval, "task": task}
        )
    return {
        "task": task,
        "task_profile": result.profile.to_dict(),
        # Facts and episodes hold text from past sessions: it must not fake the prompt's markers.
        "memory_block": escape_markers(result.block),
        "memory_report": result.report(count),
        "approval": approval,
        "notes": list(result.notes),
    }
