"""Pure token budget math: thresholds, reconciliation and compaction planning.

Nothing here performs I/O or calls a model. It works on token counts that ``engram.graph._tokens``
estimated; ``reconcile`` corrects those estimates with the provider's reported usage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engram.stores.memory import MEMORY_CAP_MAX, MEMORY_CAP_MIN, MEMORY_CAP_WINDOW_DIVISOR

# --- thresholds -------------------------------------------------
SUMMARY_RESERVE_MAX = 20_000
"""Most tokens reserved for the summary output."""
SUMMARY_RESERVE_DIVISOR = 4
"""The summary reserve is window / this, before clamping."""
BUFFER_RESERVE_MAX = 13_000
"""Most tokens reserved as a safety buffer."""
BUFFER_RESERVE_DIVISOR = 8
"""The safety buffer is window / this, before clamping."""
RESERVE_MIN = 1_000
"""Least tokens reserved for each of summary output and buffer."""
TRIGGER_FLOOR_FRACTION = 0.5
"""A tiny window never triggers below this fraction of itself (reserves would eat it all)."""
CLEAR_MAX = 100_000
"""Clearing threshold ceiling in tokens."""
CLEAR_FRACTION = 0.6
"""Clearing threshold as a fraction of the compaction trigger."""

# --- reconciliation -------------------------------------------------------------------------
RECONCILE_MIN_RATIO = 0.25
"""Provider/estimate ratios below this are treated as noise and clamped."""
RECONCILE_MAX_RATIO = 4.0
"""Provider/estimate ratios above this are treated as noise and clamped."""


@dataclass(frozen=True)
class Thresholds:
    """Token thresholds derived from a context window."""

    window: int
    """The model's context window in tokens."""
    trigger: int
    """Summarize (tier 3) when the estimate reaches this."""
    clear: int
    """Clear old tool results (tier 2) when the estimate reaches this."""
    memory_cap: int
    """Most tokens the injected memory block may use."""


def thresholds(window: int) -> Thresholds:
    """Derive the compaction trigger, clearing threshold and memory cap from a window.

    trigger = window − min(20000, max(1000, window/4)) − min(13000, max(1000, window/8)),
    clamped into the window; clear = min(100000, 0.6 × trigger); memory cap =
    max(500, min(5000, window // 200)).

    Args:
        window: Context window in tokens (positive).

    Raises:
        ValueError: ``window`` is not positive.
    """
    if window <= 0:
        raise ValueError(f"context window must be positive, got {window}")
    summary_reserve = min(SUMMARY_RESERVE_MAX, max(RESERVE_MIN, window // SUMMARY_RESERVE_DIVISOR))
    buffer_reserve = min(BUFFER_RESERVE_MAX, max(RESERVE_MIN, window // BUFFER_RESERVE_DIVISOR))
    floor = max(1, int(window * TRIGGER_FLOOR_FRACTION))
    trigger = min(window, max(floor, window - summary_reserve - buffer_reserve))
    clear = min(CLEAR_MAX, math.floor(round(trigger * CLEAR_FRACTION, 6)))
    memory_cap = max(MEMORY_CAP_MIN, min(MEMORY_CAP_MAX, window // MEMORY_CAP_WINDOW_DIVISOR))
    return Thresholds(window=window, trigger=trigger, clear=clear, memory_cap=memory_cap)


def summary_budget(window: int) -> int:
    """Return the most tokens a compaction summary may take: the trigger's summary reserve.

    The trigger already sets aside min(20000, max(1000, window/4)) tokens for the summary, so a
    summary of that size fits by construction.
    """
    return min(SUMMARY_RESERVE_MAX, max(RESERVE_MIN, window // SUMMARY_RESERVE_DIVISOR))


def reconcile(
    estimate: int, last_reported_input: int | None, estimate_at_last_report: int | None
) -> int:
    """Correct an estimate with the provider's last reported input tokens.

    The provider counted ``last_reported_input`` for a request we had estimated at
    ``estimate_at_last_report``; their ratio rescales the current estimate. Implausible ratios
    are clamped, and missing or zero figures leave the estimate unchanged.

    Args:
        estimate: Current estimate of the next request.
        last_reported_input: Input tokens the provider reported for the previous call.
        estimate_at_last_report: Our estimate of that previous request.

    Returns:
        The corrected estimate.
    """
    if not last_reported_input or not estimate_at_last_report:
        return estimate
    ratio = last_reported_input / estimate_at_last_report
    ratio = min(RECONCILE_MAX_RATIO, max(RECONCILE_MIN_RATIO, ratio))
    return math.ceil(estimate * ratio)


# --- compaction planning --------------------------------------------------------------------
Decision = Literal["ok", "clear", "summarize"]
"""What ``check_budget`` decided: nothing, tier 2 (clear), or tier 3 (summarize)."""

KEEP_RECENT_TOOL_RESULTS = 3
"""Tool results that tier 2 never clears: the most recent ones (seed default)."""
CLEAR_MIN_BATCH_FRACTION = 0.5
"""A clearing pass must free at least this fraction of the clearing threshold. Clearing edits
the middle of the history, so everything after the first edit is re-read without the prompt
cache once (about the whole threshold at full price); freeing half of it pays that back within
a few turns of cheaper requests and keeps clearing from firing on every call."""
KEEP_USER_TURNS = 3
"""Tier 3 keeps the tail starting at the 3rd-last user message (seed default)."""
KEEP_USER_TURNS_MANUAL = 1
"""``/compact`` keeps only the last user turn."""
SUMMARY_CHUNK_CHARS = 60_000
"""Most characters of history sent to one summary call; longer spans go in ordered chunks."""
MIN_DROP_FRACTION = 0.10
"""A compaction is rolled back unless the estimate drops by at least this fraction."""


def decide(estimate: int, limits: Thresholds) -> Decision:
    """Return the tier an estimate calls for: summarize at the trigger, clear at the threshold."""
    if estimate >= limits.trigger:
        return "summarize"
    if estimate >= limits.clear:
        return "clear"
    return "ok"


def clear_batch_minimum(limits: Thresholds, fraction: float = CLEAR_MIN_BATCH_FRACTION) -> int:
    """Return the fewest tokens a clearing pass must free to be worth its cache miss."""
    return max(1, math.floor(limits.clear * fraction))


def clear_minimum(
    estimate: int, raw: int, limits: Thresholds, fraction: float = CLEAR_MIN_BATCH_FRACTION
) -> int:
    """Return the fewest tokens (in ``raw`` units) a clearing pass must free to be applied.

    Normally the batch minimum; past the trigger, less is enough when it gets the estimate back
    under the trigger, since that avoids a lossy summary.

    Args:
        estimate: The reconciled estimate.
        raw: The unreconciled estimate (the unit tool-result savings are counted in).
        limits: Thresholds of the window.
        fraction: Batch minimum as a fraction of the clearing threshold.
    """
    batch = clear_batch_minimum(limits, fraction)
    if estimate < limits.trigger or raw <= 0 or estimate <= 0:
        return batch
    needed = math.ceil((estimate - limits.trigger + 1) * raw / estimate)
    return max(1, min(batch, needed))


def plan_clear(
    savings: Sequence[tuple[int, int | None]],
    *,
    min_saving: int,
    keep_recent: int = KEEP_RECENT_TOOL_RESULTS,
    stale: Sequence[tuple[int, int]] = (),
) -> list[int]:
    """Choose the tool results (and stale turn context) to clear in one batch.

    Args:
        savings: For every tool result in history order, ``(position, tokens freed)``; the
            saving is None for a result that is already cleared.
        min_saving: The batch is only worth doing when it frees at least this many tokens.
        keep_recent: The most recent results (cleared or not) that always stay.
        stale: ``(position, tokens freed)`` of context blocks appended to earlier user turns;
            always eligible (the current turn's block is never listed).

    Returns:
        Positions to clear, in order; empty when the batch would not pay for itself.
    """
    older = savings[: max(0, len(savings) - keep_recent)]
    chosen = [(pos, saved) for pos, saved in [*older, *stale] if saved is not None and saved > 0]
    if sum(saved for _, saved in chosen) < min_saving:
        return []
    return sorted(pos for pos, _ in chosen)


def plan_cut(roles: Sequence[str], keep_users: int = KEEP_USER_TURNS) -> int | None:
    """Return where the kept tail starts for a summary, or None when there is nothing to cut.

    The cut always falls on a user message, so no tool call is ever separated from its result.
    Earlier compaction summaries (role ``summary``) do not count as user turns.

    Args:
        roles: Role of each message (``system``, ``user``, ``summary``, ``assistant``,
            ``tool``).
        keep_users: How many of the last user turns to keep whole.

    Raises:
        ValueError: ``keep_users`` is less than 1 (the latest request must survive verbatim).
    """
    if keep_users < 1:
        raise ValueError("at least the latest user turn must be kept")
    users = [i for i, role in enumerate(roles) if role == "user"]
    if len(users) < keep_users:
        return None
    cut = users[-keep_users]
    span = roles[:cut]
    worth = any(role in ("user", "tool") for role in span) or sum(
        1 for role in span if role == "assistant"
    ) > span.count("summary")
    return cut if worth else None


def plan_chunks(sizes: Sequence[int], limit: int = SUMMARY_CHUNK_CHARS) -> list[range]:
    """Split a span into ordered runs of messages of at most ``limit`` characters each.

    A single message longer than ``limit`` gets a run of its own (its text is clipped when
    rendered for the summary call).
    """
    chunks: list[range] = []
    start, used = 0, 0
    for index, size in enumerate(sizes):
        if index > start and used + size > limit:
            chunks.append(range(start, index))
            start, used = index, 0
        used += size
    if start < len(sizes):
        chunks.append(range(start, len(sizes)))
    return chunks


def drop_is_enough(before: int, after: int, min_fraction: float = MIN_DROP_FRACTION) -> bool:
    """Return True when ``after`` is at least ``min_fraction`` below ``before``."""
    return after <= before * (1 - min_fraction)
