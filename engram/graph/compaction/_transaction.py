"""Compaction transactions: clear tool results, summarize a span, validate, commit or roll back.

``compact_now`` is tier 3 (used by the ``compact_history`` node, ``/compact`` and
``engram sessions compact``); ``emergency_compact`` answers a provider "context length
exceeded" error without calling the model again; ``clear_pass`` is tier 2. Every outcome is a
``CompactionResult``; nothing is written anywhere: callers commit ``result.update()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engram.graph._budget import (
    KEEP_USER_TURNS,
    MIN_DROP_FRACTION,
    drop_is_enough,
    plan_clear,
    plan_cut,
)
from engram.graph._state_values import CompactionEvent
from engram.graph._tokens import Counter, count_text, estimate_message, estimate_messages
from engram.graph.compaction._extractive import (
    EXTRACT_MAX_CHARS,
    extractive_summary,
    keep_user_requests,
)
from engram.graph.compaction._history_rules import (
    CONTEXT_CLEARED,
    clear_tool_results,
    clear_turn_context,
    commit_messages,
    is_cleared,
    is_summary,
    missing_sections,
    rebuild_history,
    roles_of,
    turn_context,
    validate_history,
)
from engram.graph.compaction._model_summary import Summarizer, model_summary

Tier = Literal["clear", "summarize", "emergency"]
Source = Literal["model", "extractive", ""]

PLACEHOLDER_TOKENS = 30
"""Approximate tokens of a cleared-result placeholder; results smaller than this stay."""
EMERGENCY_KEEP_RECENT = 1
"""Tool results an emergency compaction keeps in full: only the newest."""


@dataclass(frozen=True)
class Request:
    """What besides the messages is sent with every model call, for estimates."""

    system_prompt: str = ""
    """The stable system prompt sent ahead of the messages."""
    tool_schemas: tuple[Mapping[str, Any], ...] = ()
    """JSON schemas of the tools bound to the model."""
    extra_tokens: int = 0
    """Tokens of dynamic context appended at request time (memory block, code context)."""
    count: Counter = count_text
    """Token counter."""

    def estimate(self, messages: Sequence[BaseMessage]) -> int:
        """Estimate the request tokens for ``messages``."""
        return self.extra_tokens + estimate_messages(
            messages,
            system_prompt=self.system_prompt,
            tool_schemas=self.tool_schemas,
            count=self.count,
        )


@dataclass(frozen=True)
class CompactionResult:
    """Outcome of one compaction attempt, committed or rolled back."""

    tier: Tier
    committed: bool
    messages: tuple[BaseMessage, ...]
    """The history to use from now on: the rebuilt one when committed, else the original."""
    tokens_before: int
    tokens_after: int
    reason: str = ""
    """Why it was rolled back (empty when committed)."""
    summary: str = ""
    source: Source = ""
    removed_ids: tuple[str, ...] = ()
    """Ids of the messages removed (tier 3) or rewritten (tier 2)."""
    usage: Mapping[str, int] = field(default_factory=dict)
    """Usage of the summary calls: input, output, cache_read, calls."""
    chunks: int = 0

    def event(self) -> CompactionEvent:
        """Return the ``compaction_log`` entry describing this attempt."""
        return {
            "tier": self.tier,
            "status": "committed" if self.committed else "rolled_back",
            "reason": self.reason,
            "source": self.source,
            "removed_count": len(self.removed_ids),
            "removed_ids": list(self.removed_ids),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "chunks": self.chunks,
            "cache_read": int(self.usage.get("cache_read", 0)),
            "calls": int(self.usage.get("calls", 0)),
        }

    def update(self) -> list[BaseMessage]:
        """Return the ``messages`` state update (empty when rolled back)."""
        if not self.committed:
            return []
        if self.tier == "clear":
            return [m for m in self.messages if m.id in set(self.removed_ids)]
        return list(commit_messages(self.messages))


def clear_savings(
    messages: Sequence[BaseMessage], count: Counter = count_text
) -> list[tuple[int, int | None]]:
    """Return ``(position, tokens freed if cleared)`` per tool result; None if already cleared."""
    return [
        (i, None if is_cleared(m) else estimate_message(m, count) - PLACEHOLDER_TOKENS)
        for i, m in enumerate(messages)
        if isinstance(m, ToolMessage)
    ]


def stale_context_savings(
    messages: Sequence[BaseMessage], count: Counter = count_text
) -> list[tuple[int, int]]:
    """Return ``(position, tokens freed)`` for context blocks of user turns before the latest."""
    users = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and not is_summary(m)]
    out = []
    for position in users[:-1]:
        block = turn_context(messages[position])
        if block:
            out.append((position, count(block) - count(CONTEXT_CLEARED)))
    return out


def clear_pass(
    messages: Sequence[BaseMessage], request: Request, *, min_saving: int, keep_recent: int
) -> CompactionResult:
    """Tier 2: replace old tool-result bodies and stale turn context with short placeholders.

    Older tool results (all but ``keep_recent``) and the context appended to earlier user turns
    are cleared together, only when the batch frees ``min_saving`` tokens (the cache miss it
    causes must pay off). Ids, count and pairing are unchanged.
    """
    before = request.estimate(messages)
    positions = plan_clear(
        clear_savings(messages, request.count),
        min_saving=min_saving,
        keep_recent=keep_recent,
        stale=stale_context_savings(messages, request.count),
    )
    if not positions:
        return CompactionResult("clear", False, tuple(messages), before, before, "nothing to clear")
    tools = [p for p in positions if isinstance(messages[p], ToolMessage)]
    replaced: dict[int, BaseMessage] = dict(
        zip(tools, clear_tool_results(messages, tools), strict=True)
    )
    for p in positions:
        message = messages[p]
        if isinstance(message, HumanMessage):
            replaced[p] = clear_turn_context(message)
    staged = tuple(replaced.get(i, m) for i, m in enumerate(messages))
    after = request.estimate(staged)
    ids = tuple(str(m.id) for m in replaced.values())
    problems = validate_history(staged)
    if problems and not validate_history(messages):
        return CompactionResult("clear", False, tuple(messages), before, after, problems[0])
    return CompactionResult("clear", True, staged, before, after, removed_ids=ids)


def _stage(
    tier: Tier, messages: Sequence[BaseMessage], cut: int, summary: str, request: Request
) -> tuple[tuple[BaseMessage, ...], int, str]:
    """Rebuild the history and return it with its estimate and the first problem found."""
    staged = tuple(rebuild_history(messages, cut, summary))
    after = request.estimate(staged)
    missing = missing_sections(summary)
    problems = validate_history(staged)
    reason = (
        f"summary lacks sections: {', '.join(missing)}"
        if missing
        else (problems[0] if problems else "")
    )
    return staged, after, reason


async def compact_now(
    messages: Sequence[BaseMessage],
    *,
    keep_users: int = KEEP_USER_TURNS,
    model: BaseChatModel | None = None,
    request: Request | None = None,
    tools: Sequence[Any] = (),
    min_drop: float = MIN_DROP_FRACTION,
    tier: Tier = "summarize",
    summary_chars: int = EXTRACT_MAX_CHARS,
) -> CompactionResult:
    """Summarize everything before the ``keep_users``-th last user message, as a transaction.

    The model summarizes when given (the instruction appended after the unchanged history so
    the provider's cached prefix is reused; spans over ``SUMMARY_CHUNK_CHARS`` go in ordered
    chunks then a merge; one retry when sections are missing); with no model, or when it fails,
    a deterministic extractive summary is used. The staged history is committed only if the
    summary has all four sections, the message rules hold, and the estimate dropped by at
    least ``min_drop``.

    Args:
        messages: The history (as kept in state; a leading system message is preserved).
        keep_users: User turns kept whole at the end (3 normally, 1 for ``/compact``).
        model: Chat model for the summary, or None for the extractive summary.
        request: System prompt, tool schemas, extra tokens and counter for the estimates.
        tools: Tools bound to the summary call (the same as the agent's keep the cache warm).
        min_drop: Least fractional drop of the estimate for the result to be committed.
        tier: Label recorded in the event.
        summary_chars: Longest extractive summary (and user-request section) in characters.

    Returns:
        The committed or rolled-back result.
    """
    request = request or Request()
    original = tuple(messages)
    before = request.estimate(original)
    cut = plan_cut(roles_of(original), keep_users)
    if cut is None:
        return CompactionResult(tier, False, original, before, before, "nothing to compact")
    summary, reason, chunks = "", "", 0
    source: Source = "model"
    summarizer = Summarizer(model, tools) if model is not None else None
    if summarizer is not None:
        try:
            summary, chunks = await model_summary(summarizer, original, cut, request.system_prompt)
            summary = keep_user_requests(summary, original[:cut], max_chars=summary_chars)
        except Exception as exc:  # any provider failure: fall back, keep the reason
            reason = f"model summary failed ({type(exc).__name__}: {exc}); used extractive"
    if not summary:
        summary = extractive_summary(original[:cut], max_chars=summary_chars)
        source = "extractive"
    staged, after, problem = _stage(tier, original, cut, summary, request)
    if not problem and not drop_is_enough(before, after, min_drop):
        problem = f"estimate did not drop by {min_drop:.0%} ({before} -> {after})"
    usage = summarizer.usage if summarizer is not None else {}
    removed = tuple(str(m.id) for m in original[:cut] if not isinstance(m, SystemMessage))
    if problem:
        return CompactionResult(
            tier, False, original, before, after, problem, summary, source, (), usage, chunks
        )
    return CompactionResult(
        tier, True, staged, before, after, reason, summary, source, removed, usage, chunks
    )


def emergency_compact(
    messages: Sequence[BaseMessage], *, request: Request | None = None
) -> CompactionResult:
    """Shrink a history the provider rejected as too long, without calling the model.

    Clears every tool result but the newest, then replaces everything before the last user
    turn with an extractive summary. Either step is kept only if the history stays valid.

    Returns:
        A result whose ``messages`` is the history to retry with; ``update()`` commits it.
    """
    request = request or Request()
    original = tuple(messages)
    before = request.estimate(original)
    cleared = clear_pass(original, request, min_saving=1, keep_recent=EMERGENCY_KEEP_RECENT)
    current = cleared.messages
    cut = plan_cut(roles_of(current), 1)
    staged, after, problem = current, request.estimate(current), ""
    if cut is not None:
        summary = extractive_summary(current[:cut])
        candidate, candidate_after, problem = _stage("emergency", current, cut, summary, request)
        if not problem and candidate_after < after:
            staged, after = candidate, candidate_after
    if staged is original or after >= before:
        return CompactionResult("emergency", False, original, before, after, "could not shrink")
    kept = {m.id for m in staged}
    removed = tuple(str(m.id) for m in original if m.id not in kept)
    return CompactionResult(
        "emergency", True, staged, before, after, source="extractive", removed_ids=removed
    )
