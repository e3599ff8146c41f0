"""Which lines of a span too long for its slice to show: its head, then the lines the task names.

A function longer than its slice used to keep only its head, so a fix three hundred lines
into it never reached the model. Here the head still comes first (signature, docstring, the
first statements), and the rest of the room goes to windows around the lines a traceback in
the task points at, then around the lines that share the most task terms, weighted by how
rare each term is within the span (a term on every line says nothing about where to look).
What room is left continues the head. Pure functions.
"""

from __future__ import annotations

import math
from collections import Counter as TermCounts
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from engram.stores.codeindex import code_tokens, read_issue

HEAD_SHARE = 0.3
"""Share of a cut span's room its head keeps before any window around a task term."""
WINDOW_BEFORE = 2
"""Lines shown before a line that names task terms (the condition or call leading to it)."""
WINDOW_AFTER = 4
"""Lines shown after it (the branch or statements it governs)."""
TITLE_TERM_WEIGHT = 2.0
"""A task term its title (first line) names counts this many times: the title names the
problem most exactly. Chosen leave-one-repository-out between 1 and 2 on locbench-dev (2 in
every fold at 4K and 8K): gold changed lines at 8K 0.629 -> 0.640 on cases.jsonl, 0.787 ->
0.785 on the long tail (bench/RESULTS.md)."""
MIN_TERM_LENGTH = 3
"""Shorter task terms (``a``, ``id``, ``os``) match too many lines to point anywhere."""


def line_terms(task: str) -> frozenset[str]:
    """Return the task's index terms worth finding in code (no numbers, none too short)."""
    return frozenset(t for t in code_tokens(task) if len(t) >= MIN_TERM_LENGTH and not t.isdigit())


def title_terms(task: str) -> frozenset[str]:
    """Return the terms of the task's title (``line_terms`` of its first line, as read)."""
    return line_terms(read_issue(task).title)


def frame_lines(task: str, paths: Iterable[str]) -> Mapping[str, frozenset[int]]:
    """Return, per project path, the lines the task's traceback frames point at.

    A frame names a file as the traceback printed it (often an absolute path of an installed
    copy); it points into a project path when it is that path or ends with ``/`` and it.
    """
    frames = [(f.path.replace("\\", "/"), f.line) for f in read_issue(task).frames if f.line > 0]
    found: dict[str, set[int]] = {}
    for path in paths:
        for name, line in frames:
            if name == path or name.endswith("/" + path):
                found.setdefault(path, set()).add(line)
    return {path: frozenset(lines) for path, lines in found.items()}


def head_rows(costs: Sequence[int], room: int) -> set[int]:
    """Return the leading rows that fit ``room`` (the first row always, so nothing is empty)."""
    kept: set[int] = set()
    used = 0
    for row, cost in enumerate(costs):
        if kept and used + cost > room:
            break
        kept.add(row)
        used += cost
    return kept


def pick_rows(
    lines: Sequence[str],
    costs: Sequence[int],
    room: int,
    terms: frozenset[str],
    gap_cost: int,
    anchors: AbstractSet[int] = frozenset(),
    title: AbstractSet[str] = frozenset(),
) -> set[int]:
    """Return the rows of ``lines`` to show within ``room`` tokens.

    Args:
        lines: The span's lines.
        costs: Each line's token cost.
        room: Tokens the shown lines (and a gap marker per window) may take.
        terms: The task's terms (``line_terms``).
        gap_cost: Tokens of the marker that stands for left-out lines.
        anchors: Rows a traceback frame points at: their windows come before any term's.
        title: The terms of the task's title, which weigh TITLE_TERM_WEIGHT times as much.

    Returns:
        Row numbers into ``lines``: the head, windows around the anchors, then around the
        rows richest in rare task terms (best first, each only if it fits whole), then the
        head's continuation.
    """
    found = [set(code_tokens(line)) & terms for line in lines]
    spread = TermCounts(term for row_terms in found for term in row_terms)
    weight = {
        term: math.log(1 + len(lines) / (1 + rows)) * (TITLE_TERM_WEIGHT if term in title else 1)
        for term, rows in spread.items()
    }
    scores = [sum(weight[term] for term in row_terms) for row_terms in found]
    kept = head_rows(costs, int(room * HEAD_SHARE))
    used = sum(costs[row] for row in kept)
    by_terms = sorted(
        (r for r, score in enumerate(scores) if score > 0 and r not in anchors),
        key=lambda r: (-scores[r], r),
    )
    for row in [*sorted(r for r in anchors if 0 <= r < len(lines)), *by_terms]:
        window = [
            r
            for r in range(max(0, row - WINDOW_BEFORE), min(len(lines), row + WINDOW_AFTER + 1))
            if r not in kept
        ]
        cost = sum(costs[r] for r in window) + gap_cost
        if window and used + cost <= room:
            kept.update(window)
            used += cost
    for row, cost in enumerate(costs):
        if row in kept:
            continue
        if used + cost > room:
            break
        kept.add(row)
        used += cost
    # A one-line gap whose line costs no more than its marker is shown instead.
    kept.update(
        row
        for row in range(1, len(lines) - 1)
        if row not in kept and {row - 1, row + 1} <= kept and costs[row] <= gap_cost
    )
    return kept
