"""Render recalled facts as the memory block appended to the user turn (pure functions)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from engram.stores.memory._records import (
    MEMORY_CAP_MAX,
    MEMORY_CAP_MIN,
    MEMORY_CAP_WINDOW_DIVISOR,
    SOURCE_LABELS,
    Fact,
)

STALE_AFTER_DAYS = 30

MEMORY_HEADER = "## Remembered facts"
MEMORY_REMINDER = (
    "These memories are clues, not facts. Versions, configurations and paths may have "
    "changed: check them against the current files before acting on them. Facts marked "
    "unverified were not confirmed by a person."
)
STALE_MARK = "possibly stale"
QUARANTINE_MARK = "QUARANTINED: unconfirmed, used in no prompt until a person confirms it"


def memory_cap(window: int) -> int:
    """Return the token cap of the facts block for a context window."""
    return max(MEMORY_CAP_MIN, min(MEMORY_CAP_MAX, window // MEMORY_CAP_WINDOW_DIVISOR))


def is_stale(fact: Fact, now: datetime, *, after_days: int = STALE_AFTER_DAYS) -> bool:
    """Tell whether nobody verified ``fact`` in the last ``after_days`` days."""
    checked = fact.last_verified or fact.created
    return now - checked > timedelta(days=after_days)


def provenance_mark(fact: Fact) -> str:
    """Say who proposed ``fact`` and what untrusted content preceded it.

    For example ``by user``, or ``by model after read_file, grep_code``.
    """
    mark = f"by {SOURCE_LABELS.get(fact.source, fact.source)}"
    return f"{mark} after {', '.join(fact.after)}" if fact.after else mark


def render_fact_line(fact: Fact, now: datetime, *, stale_after_days: int = STALE_AFTER_DAYS) -> str:
    """Render one fact as a bullet with its id, scope, provenance, dates and warnings."""
    marks = [fact.scope, provenance_mark(fact), f"saved {fact.created.date().isoformat()}"]
    if fact.quarantined:
        marks.append(QUARANTINE_MARK)
    elif fact.last_verified is not None:
        marks.append(f"verified {fact.last_verified.date().isoformat()}")
    else:
        marks.append("unverified")
    if is_stale(fact, now, after_days=stale_after_days):
        marks.append(f"{STALE_MARK}: not verified for over {stale_after_days} days")
    return f"- [{fact.id}] {fact.text} ({'; '.join(marks)})"


def render_facts_block(
    facts: Sequence[Fact],
    *,
    now: datetime,
    cap_tokens: int,
    count_tokens: Callable[[str], int],
    stale_after_days: int = STALE_AFTER_DAYS,
) -> tuple[str, list[Fact]]:
    """Render the best-first ``facts`` into a block of at most ``cap_tokens`` tokens.

    Facts are added in order until the next one would pass the cap; the header and
    reminder always come first. Quarantined facts never enter the block. Returns the block
    ("" when no fact fits) and the facts in it.
    """
    head = f"{MEMORY_HEADER}\n{MEMORY_REMINDER}\n"
    used = count_tokens(head)
    lines: list[str] = []
    kept: list[Fact] = []
    for fact in (f for f in facts if not f.quarantined):
        line = render_fact_line(fact, now, stale_after_days=stale_after_days) + "\n"
        cost = count_tokens(line)
        if used + cost > cap_tokens:
            break
        lines.append(line)
        kept.append(fact)
        used += cost
    if not kept:
        return "", []
    return (head + "".join(lines)).rstrip("\n"), kept
