"""Operations on a saved session used by chat slash commands and ``engram sessions``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram.graph import (
    LAST_NODE,
    CompactionEvent,
    State,
    budget_partitions,
    count_text,
    request_for,
)
from engram.graph.compaction import compact_now
from engram.graph.tools import build_tools
from engram.stores import Ledger
from engram.stores.memory import ExperienceStore, record_verdict
from engram.stores.project import memory_key

COMPACT_KEEP_USERS = 1
"""User turns ``/compact`` keeps whole (the automatic tier keeps 3)."""


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _state(engram: Any, thread_id: str) -> State:
    values = engram.graph.get_state(_config(thread_id)).values or {}
    return State(**{k: v for k, v in values.items() if k in State.__dataclass_fields__})


async def compact_session(engram: Any, thread_id: str) -> CompactionEvent:
    """Summarize a session down to its last user turn, as a validated transaction.

    Returns:
        The compaction event (committed or rolled back, with token counts).
    """
    state = _state(engram, thread_id)
    context = engram.context
    tools = build_tools(context, engram.deps)
    result = await compact_now(
        state.messages,
        keep_users=COMPACT_KEEP_USERS,
        model=engram.deps.model_factory(context),
        request=request_for(state, tools, engram.deps.count_tokens or count_text),
        tools=tools,
    )
    event = result.event()
    event["trigger"] = "manual"
    if result.committed:
        engram.graph.update_state(
            _config(thread_id),
            {"messages": result.update(), "compaction_log": [event]},
            as_node=LAST_NODE,
        )
    Ledger.for_project(context.project_path, context.home_path).append(
        thread_id, "compaction", event
    )
    return event


def partitions(engram: Any, thread_id: str) -> dict[str, int]:
    """Return the next request's token estimate split by part (system, rules, memory, …)."""
    state = _state(engram, thread_id)
    tools = build_tools(engram.context, engram.deps)
    return budget_partitions(state, tools, engram.deps.count_tokens or count_text)


def record_outcome(engram: Any, thread_id: str, verdict: str) -> str:
    """Record the user's verdict on the last task (``success``/``failure``) as experience."""
    state = _state(engram, thread_id)
    learned = state.memory_report.get("learned")
    episode = learned["episode"] if learned else ""
    if not episode:
        return "no finished task in this session to rate yet"
    repo = ExperienceStore(
        engram.store, memory_key(engram.context.project_path, engram.context.home_path)
    )
    record_verdict(repo, episode, verdict, now=datetime.now(UTC))  # type: ignore[arg-type]
    return f"recorded {verdict} for the last task (episode {episode})"
