"""Node ``learn_from_task``: record the episode, adjust applied patterns, extract facts."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from engram.graph import ENGRAM_AUTHOR, Context, Deps, LearnedValue, State, StateUpdate
from engram.graph.profile import is_high_risk
from engram.nodes._support import current_thread_id
from engram.stores import Ledger, StoreError, find_secret
from engram.stores.memory import (
    Episode,
    ExperienceStore,
    Outcome,
    Pattern,
    apply_outcome,
    auto_extract,
    new_id,
)
from engram.stores.project import memory_key

PATH_ARGS = ("path", "file", "file_path", "filename", "target")
SUMMARY_CHARS = 300
LESSON_CHARS = 300
WITHHELD = "(withheld: looked like a credential)"
SEVERITY_BY_OUTCOME = {"failure": 3, "success": 4, "unknown": 4}
HIGH_RISK_FAILURE_SEVERITY = 2


class FactExtractor(Protocol):
    """The facts auto-extraction function (``engram.stores.memory._recall.auto_extract``)."""

    def __call__(
        self,
        user_text: str,
        *,
        store: BaseStore,
        project_key: str,
        external_content_seen: bool,
        provenance: Mapping[str, str],
        now: datetime,
    ) -> Sequence[Any]:
        """Save facts stated in ``user_text``; return what was saved."""
        ...


@dataclasses.dataclass(frozen=True)
class Learned:
    """What one finished task taught the memory."""

    episode: Episode
    patterns: tuple[Pattern, ...]
    conflicts_flagged: tuple[str, ...]
    facts_saved: int
    confidence_changed: bool
    repeated: bool = False
    """The task's episode was recorded before (a replay): nothing new was learned."""


def decide_outcome(state: State) -> tuple[Outcome, bool]:
    """Return the outcome and whether it is an explicit verdict.

    An explicit ``state.outcome`` (set from ``/good``, ``/bad`` or ``--outcome``) wins, then
    the verification of the task's edits (tests passed or failed); tool errors without a
    verdict mean failure but are not a verdict; otherwise unknown.
    """
    if state.outcome in ("success", "failure"):
        return state.outcome, True  # type: ignore[return-value]
    checked = state.verification.get("status")
    if checked in ("passed", "failed"):  # the project's own checks ran on the changes
        return ("success" if checked == "passed" else "failure"), True
    if state.tool_errors > 0:
        return "failure", False
    return "unknown", False


def _turn(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index:])
    return list(messages)


def files_touched(messages: Sequence[AnyMessage]) -> tuple[str, ...]:
    """Return the file paths named in this turn's tool calls, in first-seen order."""
    found: list[str] = []
    for message in _turn(messages):
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            for key in PATH_ARGS:
                value = call.get("args", {}).get(key)
                if isinstance(value, str) and value and value not in found:
                    found.append(value)
    return tuple(found)


def task_episode_id(thread_id: str, messages: Sequence[AnyMessage]) -> str | None:
    """Return the episode id of the current task: the same for every replay of that task.

    The task is the thread's last user message (its id survives replays in the checkpoint);
    None when there is no identified user message.
    """
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and message.name != ENGRAM_AUTHOR:
            if not message.id:
                return None
            digest = hashlib.sha256(f"{thread_id}\0{message.id}".encode()).hexdigest()
            return f"ep-{digest[:16]}"
    return None


def _clean(text: str, limit: int) -> str:
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return WITHHELD if find_secret(text) else text


def _lesson(state: State, outcome: Outcome) -> str:
    if outcome != "failure":
        return ""
    failing = state.verification.get("failing") or []
    if state.verification.get("status") == "failed":
        return _clean(
            "the checks still failed after the changes: " + "; ".join(failing[:3]), LESSON_CHARS
        )
    messages = state.messages
    errors = [m for m in _turn(messages) if isinstance(m, ToolMessage) and m.status == "error"]
    if errors:
        first = errors[0]
        return _clean(
            f"{len(errors)} tool call(s) failed; first: {first.name}: {first.content}", LESSON_CHARS
        )
    return "the task failed; re-check the approach before repeating it"


def learn(
    store: BaseStore,
    state: State,
    context: Context,
    *,
    now: datetime,
    thread_id: str,
    extract: FactExtractor | None,
) -> Learned:
    """Record the episode and update patterns synchronously (called off the event loop)."""
    repo = ExperienceStore(store, memory_key(context.project_path, context.home_path))
    episode_id = task_episode_id(thread_id, state.messages) or new_id("ep", now)
    earlier = repo.get("episode", episode_id)
    if isinstance(earlier, Episode):  # a replay of a task whose outcome is already recorded
        return Learned(earlier, (), (), 0, False, repeated=True)
    outcome, explicit = decide_outcome(state)
    report = state.memory_report.get("experience", {})
    applied = [i["id"] for i in report.get("injected", []) if i.get("kind") == "pattern"]
    profile = state.task_profile
    severity = SEVERITY_BY_OUTCOME[outcome]
    if outcome == "failure" and is_high_risk(profile):
        severity = HIGH_RISK_FAILURE_SEVERITY
    episode = Episode(
        id=episode_id,
        date=now,
        task_type=str(profile.get("task_type") or "feature"),
        summary=_clean(state.task, SUMMARY_CHARS),
        outcome=outcome,
        files=tuple(
            _clean(f, SUMMARY_CHARS) for f in state.files_changed or files_touched(state.messages)
        ),
        lesson=_lesson(state, outcome),
        severity=severity,
        patterns_applied=tuple(applied),
        thread_id=thread_id,
        confirmed=explicit,
    )
    repo.put(episode)
    updated: list[Pattern] = []
    if explicit:
        for pattern_id in applied:
            pattern = repo.get("pattern", pattern_id)
            if isinstance(pattern, Pattern):
                updated.append(apply_outcome(pattern, success=outcome == "success", now=now))
                repo.put(updated[-1])
    flagged = _flag_conflicts(repo, report.get("conflicts", []))
    saved = 0
    if extract is not None and outcome != "failure":
        saved = len(
            extract(
                state.task,
                store=store,
                project_key=repo.project_key,
                external_content_seen=state.external_content_seen,
                provenance={"thread_id": thread_id, "source": "task"},
                now=now,
            )
        )
    return Learned(episode, tuple(updated), tuple(flagged), saved, explicit and bool(applied))


def _flag_conflicts(repo: ExperienceStore, conflicts: Sequence[Mapping[str, Any]]) -> list[str]:
    flagged: list[str] = []
    for conflict in conflicts:
        ids = [conflict["winner"], *conflict.get("losers", [])]
        for pattern_id in ids:
            pattern = repo.get("pattern", pattern_id)
            if not isinstance(pattern, Pattern):
                continue
            others = tuple(
                dict.fromkeys([*pattern.conflicts_with, *(i for i in ids if i != pattern_id)])
            )
            if others != pattern.conflicts_with:
                repo.put(dataclasses.replace(pattern, conflicts_with=others))
                flagged.append(pattern_id)
    return flagged


def learn_from_task(
    state: State,
    runtime: Runtime[Context],
    *,
    deps: Deps,
    extract: FactExtractor | None = auto_extract,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> StateUpdate:
    """Learn from the finished task; never guess an outcome that the run did not give.

    Args:
        state: Graph state after the final answer.
        runtime: Run settings and the injected store.
        deps: Live handles; ``deps.store`` is used when the runtime has no store.
        extract: Facts auto-extraction; None skips it.
        clock: Current time (frozen in tests).
    """
    store = runtime.store if runtime.store is not None else deps.store
    if store is None:
        return {"notes": ["no memory store is configured: nothing was learned from this task"]}
    thread_id = current_thread_id()
    try:
        learned = learn(
            store, state, runtime.context, now=clock(), thread_id=thread_id, extract=extract
        )
    except StoreError as exc:
        return {"notes": [f"could not record what this task taught: {exc}"]}
    if learned.repeated:
        earlier: LearnedValue = {
            "episode": learned.episode.id,
            "outcome": learned.episode.outcome,
            "repeated": True,
        }
        return {
            "memory_report": {**state.memory_report, "learned": earlier},
            "notes": [
                f"replayed task: its episode {learned.episode.id} was recorded "
                "before, so nothing new was learned"
            ],
        }
    summary: LearnedValue = {
        "episode": learned.episode.id,
        "outcome": learned.episode.outcome,
        "patterns": {
            p.id: {"confidence": p.confidence, "status": p.status} for p in learned.patterns
        },
        "conflicts_flagged": list(learned.conflicts_flagged),
        "facts_saved": learned.facts_saved,
    }
    Ledger.for_project(runtime.context.project_path, runtime.context.home_path).append(
        thread_id, "learned", summary
    )
    notes = []
    if learned.episode.outcome == "unknown":
        notes.append("outcome unknown: episode recorded, pattern confidence unchanged")
    return {"memory_report": {**state.memory_report, "learned": summary}, "notes": notes}
