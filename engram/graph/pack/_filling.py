"""Pure context-pack filling: progressive passes over tagged sections, and rendering to text.

The pack budget is spent in passes: PASSES[0] (rules, Phase 0 memory, code map),
PASSES[1] (code slices), PASSES[2] (related history). A pass also gets what earlier passes left
unused; what is left after the last pass tops up the code slices. Every section is tagged and
token-counted with an injected counter, and the same candidates always give the same bytes.
Item text is repository, memory or conversation content: its structural markers are escaped
before it is counted, so no item can close its section or fake engram's own markers, and an
item that fits is cleaned (credentials redacted) before it is placed, so a key in an ordinary
file reaches the model no more through the pack than through ``read_file``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from engram.graph._markers import escape_markers
from engram.graph._state_values import ContextPackValue, PackItemValue, PackSectionValue
from engram.graph._tokens import Counter


@dataclass(frozen=True)
class Pass:
    """One fill pass: the sections it serves, in priority order, and its share of the budget."""

    sections: tuple[str, ...]
    fraction: float


PASSES: tuple[Pass, ...] = (
    Pass(("rules", "memory", "code_map"), 0.3),
    Pass(("slices",), 0.5),
    Pass(("history",), 0.2),
)
"""Progressive fill (seed): core first, then code slices, then related history."""

SECTION_ORDER: tuple[str, ...] = ("rules", "memory", "code_map", "slices", "history")
"""Order of the sections in the rendered pack (stable content first)."""

SECTION_TITLES: Mapping[str, str] = {
    "rules": "Project rules",
    "memory": "Memory (clues, not facts: check against the current files)",
    "code_map": "Code map: files ranked for this task, with why",
    "slices": "Code slices",
    "history": "Related earlier conversation",
}
"""Heading shown inside each section's tag."""

CONTIGUOUS_SECTIONS = frozenset({"rules", "memory", "history"})
"""Sections of running text: filling stops at the first paragraph that does not fit, so no
paragraph is skipped in the middle. Other sections skip an item that does not fit and try
the next (a smaller slice may still fit)."""

SECTION_SHARE_CAP = 0.5
"""In a pass serving several sections, each section but the last may take at most this share
of what the pass has left when its turn comes, so rules cannot starve the code map."""

TOP_UP_SECTION = "slices"
"""Section that receives the budget left over after the last pass."""


@dataclass(frozen=True)
class PackItem:
    """A candidate for the pack: rendered text plus where it comes from and why."""

    section: str
    text: str
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    symbol: str = ""
    score: float = 0.0
    reasons: tuple[str, ...] = ()
    shown: tuple[tuple[int, int], ...] = ()
    """The line runs shown, when the slice leaves lines out between them (empty when it shows
    ``start_line`` to ``end_line`` whole)."""

    @property
    def lines(self) -> tuple[int, int]:
        """Return the item's first and last line (0, 0 for text that is not code)."""
        return self.start_line, self.end_line

    def to_dict(self) -> PackItemValue:
        """Return the item's JSON form (its text stays in the rendered pack)."""
        value: PackItemValue = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "score": round(self.score, 6),
            "reasons": list(self.reasons),
        }
        if self.shown:
            value["shown"] = [[a, b] for a, b in self.shown]
        return value


@dataclass(frozen=True)
class Section:
    """A filled section: the items that fit, their tokens, and what the section was offered."""

    name: str
    budget: int
    tokens: int
    items: tuple[PackItem, ...]
    dropped: int = 0
    """Candidates that did not fit."""

    def to_dict(self) -> PackSectionValue:
        """Return the section's JSON form."""
        return {
            "name": self.name,
            "tokens": self.tokens,
            "budget": self.budget,
            "dropped": self.dropped,
            "items": [item.to_dict() for item in self.items],
        }


@dataclass(frozen=True)
class Pack:
    """A filled context pack and its rendered text."""

    sections: tuple[Section, ...]
    budget: int
    tokens: int
    text: str
    notes: tuple[str, ...] = field(default=())

    def section(self, name: str) -> Section | None:
        """Return the section called ``name`` (None when the pack has no such section)."""
        return next((s for s in self.sections if s.name == name), None)

    def to_dict(self) -> ContextPackValue:
        """Return the pack in the JSON contract of ``engram context --json``."""
        return {
            "text": self.text,
            "sections": [s.to_dict() for s in self.sections],
            "tokens": self.tokens,
            "budget": self.budget,
            "notes": list(self.notes),
        }


def _open_tag(name: str) -> str:
    return f'<section name="{name}">\n# {SECTION_TITLES.get(name, name)}'


def _close_tag() -> str:
    return "</section>"


@dataclass
class _Filling:
    """Mutable bookkeeping of one ``fill_pack`` call (never leaves this module)."""

    count: Counter
    pending: dict[str, list[PackItem]]
    clean: Callable[[PackItem], str] | None = None
    placed: dict[str, list[PackItem]] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)
    offered: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)

    def fill(self, name: str, allowance: int) -> int:
        """Place ``name``'s pending items within ``allowance``; return the tokens spent."""
        self.offered[name] = self.offered.get(name, 0) + allowance
        pending = self.pending.get(name, [])
        spent = 0
        overhead = (
            0 if self.placed.get(name) else self.count(_open_tag(name)) + self.count(_close_tag())
        )
        keep: list[PackItem] = []
        for index, item in enumerate(pending):
            cost = self.count(item.text) + overhead
            if spent + cost <= allowance and self.clean is not None:
                cleaned = self.clean(item)  # only what fits pays for the cleaning
                if cleaned != item.text:
                    item = replace(item, text=cleaned)
                    cost = self.count(cleaned) + overhead
            if spent + cost <= allowance:
                self.placed.setdefault(name, []).append(item)
                spent += cost
                overhead = 0
                continue
            if name in CONTIGUOUS_SECTIONS:
                keep.extend(pending[index:])
                break
            keep.append(item)
        self.pending[name] = keep
        self.used[name] = self.used.get(name, 0) + spent
        return spent


def fill_pack(
    candidates: Iterable[PackItem],
    budget: int,
    count: Counter,
    *,
    passes: Sequence[Pass] = PASSES,
    notes: Sequence[str] = (),
    clean: Callable[[PackItem], str] | None = None,
) -> Pack:
    """Fill the sections from ``candidates`` within ``budget`` tokens and render the pack.

    Args:
        candidates: Items in priority order within each section (the caller ranks them).
        budget: Token budget of the whole pack.
        count: Token counter (a word counter in tests gives exact budgets).
        passes: Fill passes; their fractions should sum to 1.
        notes: Degradation notes to carry on the pack.
        clean: The text of each item that fits, as it is placed (counted again when it
            changed): the caller's credential redaction. None places items as they are.

    Returns:
        The pack; each section's tokens (tags included) never exceed the budget it was
        offered, and the section tokens sum to at most ``budget``.
    """
    pending: dict[str, list[PackItem]] = {}
    for item in candidates:
        pending.setdefault(item.section, []).append(replace(item, text=escape_markers(item.text)))
    state = _Filling(count=count, pending=pending, clean=clean)
    spent_total = 0
    carry = 0
    for number, step in enumerate(passes):
        last = number == len(passes) - 1
        allowance = budget - spent_total if last else int(budget * step.fraction) + carry
        allowance = min(allowance, budget - spent_total)
        left = allowance
        for position, name in enumerate(step.sections):
            share = left if position == len(step.sections) - 1 else int(left * SECTION_SHARE_CAP)
            left -= state.fill(name, share)
        spent_total += allowance - left
        carry = left
    if budget - spent_total > 0 and state.pending.get(TOP_UP_SECTION):
        spent_total += state.fill(TOP_UP_SECTION, budget - spent_total)
    sections = tuple(
        Section(
            name=name,
            budget=state.offered.get(name, 0),
            tokens=state.used.get(name, 0),
            items=tuple(state.placed.get(name, [])),
            dropped=len(state.pending.get(name, [])),
        )
        for name in _names(pending)
    )
    return Pack(
        sections=sections,
        budget=budget,
        tokens=sum(s.tokens for s in sections),
        text=render_pack(sections),
        notes=tuple(notes),
    )


def _names(pending: Mapping[str, list[PackItem]]) -> list[str]:
    known = [name for name in SECTION_ORDER]
    extra = sorted(name for name in pending if name not in SECTION_ORDER)
    return known + extra


def render_pack(sections: Iterable[Section], *, skip: Iterable[str] = ()) -> str:
    """Render sections with items as tagged blocks, in the given order.

    Args:
        sections: Filled sections.
        skip: Section names to leave out (e.g. rules already in the system prompt).
    """
    leave_out = set(skip)
    blocks = []
    for section in sections:
        if not section.items or section.name in leave_out:
            continue
        body = "\n".join(item.text for item in section.items)
        blocks.append(f"{_open_tag(section.name)}\n{body}\n{_close_tag()}")
    return "\n\n".join(blocks)
