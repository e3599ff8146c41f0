"""Graph state: what callers send (``InputState``) and what nodes share (``State``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph import add_messages
from typing_extensions import TypedDict

from engram.graph._state_values import (
    ActionReview,
    ApprovalValue,
    BlockedAction,
    BudgetReport,
    CodeHitValue,
    CompactionEvent,
    ContextPackValue,
    MemoryReport,
    RelatedSymbolValue,
    RulesReport,
    TaskProfileValue,
    VerificationValue,
)

USAGE_KEYS = ("input", "output", "cache_read", "calls")


def append_unique(left: Sequence[str] | None, right: Sequence[str] | str | None) -> list[str]:
    """Append notes, keeping first-seen order and dropping exact repeats."""
    out = list(left or [])
    items = [right] if isinstance(right, str) else list(right or [])
    for item in items:
        if item not in out:
            out.append(item)
    return out


def append_or_clear(left: Sequence[str] | None, right: Sequence[str] | None) -> list[str]:
    """Append names once each; an explicit ``None`` on the right clears the list (a new turn)."""
    if right is None:
        return []
    return append_unique(left, right)


def append_log(
    left: Sequence[Mapping[str, Any]] | None, right: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Append log entries (compaction events and the like) in order."""
    return [dict(e) for e in (left or [])] + [dict(e) for e in (right or [])]


def append_log_or_clear(
    left: Sequence[Mapping[str, Any]] | None, right: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Append entries in order; an explicit ``None`` on the right clears the list (a new turn)."""
    if right is None:
        return []
    return append_log(left, right)


def add_usage(left: Mapping[str, int] | None, right: Mapping[str, int] | None) -> dict[str, int]:
    """Sum token usage counters key by key; unknown keys are kept and summed too."""
    out = {k: 0 for k in USAGE_KEYS}
    for part in (left or {}, right or {}):
        for key, value in part.items():
            out[key] = out.get(key, 0) + int(value or 0)
    return out


def any_true(left: bool | None, right: bool | None) -> bool:
    """Latch a flag: once true it stays true for the session."""
    return bool(left) or bool(right)


def merge_by_key(
    left: Sequence[Mapping[str, Any]] | None, right: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Merge hit lists from parallel branches, keyed by ``key`` (or path+lines).

    A later entry with the same key replaces the earlier one when its score is higher; an
    explicit ``None`` on the right clears the list (a new turn starts fresh).
    """
    if right is None:
        return []
    merged: dict[str, dict[str, Any]] = {}
    for entry in list(left or []) + list(right):
        key = str(
            entry.get("key")
            or f"{entry.get('path')}:{entry.get('start_line')}-{entry.get('end_line')}"
            f":{entry.get('symbol')}"
        )
        old = merged.get(key)
        if old is None or float(entry.get("score", 0.0)) > float(old.get("score", 0.0)):
            merged[key] = dict(entry)
    return list(merged.values())


@dataclass(kw_only=True)
class InputState:
    """What a caller sends: the conversation, with the new user turn last."""

    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    """The conversation actually sent to the model (system prompt excluded)."""


@dataclass(kw_only=True)
class State(InputState):
    """Everything the nodes of one session share."""

    task: str = ""
    """Text of the current user request (the last human message of this turn)."""

    system_prompt: str = ""
    """Stable system prompt: role, tool policy and rules files; the cached prefix."""

    rules_report: RulesReport = field(default_factory=lambda: RulesReport())
    """Which rules files were read, their sizes, and whether the total was truncated."""

    task_profile: TaskProfileValue = field(default_factory=lambda: TaskProfileValue())
    """Phase 0 profile of the task: type, risk, features and the reasons for the grade."""

    memory_block: str = ""
    """Memory text (facts and experience) appended to the current user turn."""

    memory_report: MemoryReport = field(default_factory=lambda: MemoryReport())
    """What Phase 0 injected and why (ids, kinds, token counts)."""

    approval: ApprovalValue = field(default_factory=lambda: ApprovalValue())
    """Human decision on a high-risk task: approved flag and added constraints."""

    code_hits: Annotated[list[CodeHitValue], merge_by_key] = field(default_factory=list)
    """Code locations found for the task by exact and semantic search."""

    related_symbols: Annotated[list[RelatedSymbolValue], merge_by_key] = field(default_factory=list)
    """Symbols reached from the hits through the relation index."""

    context_pack: ContextPackValue = field(default_factory=lambda: ContextPackValue())
    """The budgeted context pack: sections with items and token counts."""

    budget: BudgetReport = field(default_factory=lambda: BudgetReport())
    """Latest token budget report: estimate, thresholds and the decision taken."""

    compaction_log: Annotated[list[CompactionEvent], append_log] = field(default_factory=list)
    """Compaction events: tier, what was removed, tokens before and after."""

    usage: Annotated[dict[str, int], add_usage] = field(default_factory=dict)
    """Token usage summed over the session: input, output, cache_read, calls."""

    last_usage: dict[str, int] = field(default_factory=dict)
    """Usage the provider reported for the most recent model call."""

    external_content_seen: Annotated[bool, any_true] = False
    """Whether untrusted content (a tool result: project files, search output, MCP) has
    entered this session; auto-extraction pauses from then on."""

    untrusted_sources: Annotated[list[str], append_unique] = field(default_factory=list)
    """Tools whose results (untrusted content) have entered this session, first seen first;
    facts the model saves afterwards record them and are quarantined."""

    degraded_branches: Annotated[list[str], append_or_clear] = field(default_factory=list)
    """Retrieval branches that timed out or failed this turn (their notes say why)."""

    notes: Annotated[list[str], append_unique] = field(default_factory=list)
    """Degradations and warnings worth showing the user (a branch timed out, …)."""

    steps: int = 0
    """Model calls made for the current user turn."""

    tool_errors: int = 0
    """Tool calls that failed during the current user turn."""

    outcome: str = ""
    """Outcome of the finished task: success, failure, or empty while unknown."""

    error: str = ""
    """Why this turn stopped before its work (unusable run settings); empty when it did not."""

    action_reviews: dict[str, ActionReview] = field(default_factory=dict)
    """Decisions on the pending edits and commands, by tool call id: action, reason, args."""

    approved_kinds: Annotated[list[str], append_unique] = field(default_factory=list)
    """Kinds of action (edit, command) the user approved for the rest of the session."""

    files_changed: Annotated[list[str], append_or_clear] = field(default_factory=list)
    """Project files the current task changed through the edit tools."""

    blocked: Annotated[list[BlockedAction], append_log_or_clear] = field(default_factory=list)
    """What the current turn was refused: each with ``tool`` (or ``confirm_task``) and
    ``reason`` (no approval without a terminal, the user said no, a rejected high-risk task)."""

    verification: VerificationValue = field(default_factory=lambda: VerificationValue())
    """The checks run after the task's edits: status (passed, failed, not-run), rounds, runs."""


class StateUpdate(TypedDict, total=False):
    """What a node returns: any subset of the state's fields, each typed as its reducer takes it.

    A field with a reducer takes what the reducer's right side accepts (``None`` clears the
    lists that clear); the others take their field's own type.
    """

    messages: Sequence[BaseMessage] | BaseMessage
    task: str
    system_prompt: str
    rules_report: RulesReport
    task_profile: TaskProfileValue
    memory_block: str
    memory_report: MemoryReport
    approval: ApprovalValue
    code_hits: Sequence[Mapping[str, Any]] | None
    related_symbols: Sequence[Mapping[str, Any]] | None
    context_pack: ContextPackValue
    budget: BudgetReport
    compaction_log: Sequence[CompactionEvent] | None
    usage: Mapping[str, int] | None
    last_usage: dict[str, int]
    external_content_seen: bool | None
    untrusted_sources: Sequence[str] | str | None
    degraded_branches: Sequence[str] | None
    notes: Sequence[str] | str | None
    steps: int
    tool_errors: int
    outcome: str
    error: str
    action_reviews: dict[str, ActionReview]
    approved_kinds: Sequence[str] | str | None
    files_changed: Sequence[str] | None
    blocked: Sequence[BlockedAction] | None
    verification: VerificationValue
