"""Pure pack items from running text: rules and memory paragraphs, related earlier exchanges."""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.graph.pack._filling import PackItem

HISTORY_EXCHANGES = 2
"""Earlier exchanges offered to the history section (seed: the two most relevant)."""
MIN_WORD_CHARS = 3
"""Shorter words are ignored when matching history to the task."""
_WORD = re.compile(r"[\w]+", re.UNICODE)


def text_items(section: str, text: str, *, label_prefix: str = "## ") -> list[PackItem]:
    """Split running text (rules, memory) into paragraph items, in order.

    A paragraph starting with ``label_prefix`` names the source of what follows (the rules
    loader heads each file that way); items carry it as their ``path``.
    """
    items = []
    label = ""
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if not paragraph:
            continue
        if paragraph.startswith(label_prefix):
            label = paragraph[len(label_prefix) :].split("\n", 1)[0].strip()
        items.append(PackItem(section=section, text=paragraph, path=label))
    return items


def history_items(
    exchanges: Sequence[tuple[str, str]], task: str, *, limit: int = HISTORY_EXCHANGES
) -> list[PackItem]:
    """Pick the earlier (request, answer) exchanges that share the most words with ``task``.

    Exchanges sharing no word are left out; the chosen ones keep their original order.
    """
    wanted = _words(task)
    scored = []
    for number, (request, answer) in enumerate(exchanges):
        overlap = len(wanted & _words(f"{request} {answer}"))
        if overlap:
            scored.append((overlap, number))
    chosen = sorted(number for _, number in sorted(scored, key=lambda p: (-p[0], -p[1]))[:limit])
    items = []
    for number in chosen:
        request, answer = exchanges[number]
        overlap = len(wanted & _words(f"{request} {answer}"))
        items.append(
            PackItem(
                section="history",
                text=f"User: {request.strip()}\nAssistant: {answer.strip()}",
                score=float(overlap),
                reasons=(f"shares {overlap} words with the task",),
            )
        )
    return items


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= MIN_WORD_CHARS}
