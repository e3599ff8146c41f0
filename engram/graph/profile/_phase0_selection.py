"""Phase 0 selection: which experience to inject for a task, within its risk budget.

Pure functions with named constants and an injected token counter: strategies by
direct lookup, patterns by trigger match and confidence (conflicts resolved), failure episodes
for high risk weighted by age, then rendered into a block that never exceeds the risk budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from engram.graph._state_values import SelectionReport
from engram.graph.profile._task_profile import Risk, TaskProfile, task_terms
from engram.stores.memory import (
    Episode,
    Pattern,
    Record,
    Strategy,
    pick_winner,
    same_trigger_groups,
)

if TYPE_CHECKING:  # engram.graph._state imports langgraph.graph (~0.4 s of CLI start-up)
    pass

RISK_BUDGETS: dict[Risk, int] = {"low": 1_000, "medium": 3_000, "high": 8_000}
"""Most tokens the experience block may take per risk level *(seed)*."""
DECAY_BANDS: tuple[tuple[float, float], ...] = ((7.0, 1.0), (30.0, 0.7), (90.0, 0.4))
"""(max age in days, weight): older than the last band is archived *(seed)*."""
REFERENCED_WEIGHT = 1.0
"""Episodes a pattern was learned from keep their full weight."""
SEVERE_FLOOR_WEIGHT = 0.4
"""Severity-1 episodes are never archived and never weigh less than this."""
SEVERE = 1
OTHER_TYPE_RELEVANCE = 0.5
"""Relevance of a failure episode of another task type that shares files or a pattern."""
SHARED_FILE_BONUS = 0.5
SEVERITY_BONUS: dict[int, float] = {1: 0.5, 2: 0.25}
TERM_BONUS = 0.1
"""Score added per salient term a failure episode shares with the task …"""
MAX_TERM_BONUS_TERMS = 5
"""… counting at most this many terms."""
MAX_FIELD_CHARS = 400
"""Longest text shown per field of an item, so one item cannot eat the budget."""
PRIORITY_RANK = {"high": 0, "medium": 1, "low": 2}
SECONDS_PER_DAY = 86_400
MAX_SKIPPED = 40
"""Records the report says it left out (and why); the rest are counted in one line."""


@dataclass(frozen=True)
class Density:
    """How many items of each kind a risk level gets."""

    strategies: int
    patterns: int
    episodes: int
    max_items: int


DENSITY: dict[Risk, Density] = {
    "low": Density(strategies=3, patterns=0, episodes=0, max_items=3),
    "medium": Density(strategies=2, patterns=3, episodes=0, max_items=5),
    "high": Density(strategies=3, patterns=3, episodes=3, max_items=8),
}
"""Injection density *(seed)*: low 2–3 strategies; medium strategies + patterns, 3–5 items;
high strategies + patterns + failure episodes, 5–8 items."""


@dataclass(frozen=True)
class Injected:
    """One injected item and why it was chosen."""

    kind: str
    id: str
    reason: str
    weight: float = 1.0


@dataclass(frozen=True)
class Selection:
    """The experience part of Phase 0 for one task."""

    risk: Risk
    block: str
    tokens: int
    budget: int
    items: tuple[Injected, ...]
    skipped: tuple[tuple[str, str, str], ...] = ()
    """(kind, id, why) of candidates left out (density, budget, conflict)."""
    conflicts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(winner id, loser ids) for patterns competing on one trigger."""

    def report(self) -> SelectionReport:
        """Return the JSON-ready account of what was injected and why."""
        return {
            "risk": self.risk,
            "budget": self.budget,
            "tokens": self.tokens,
            "injected": [
                {"kind": i.kind, "id": i.id, "reason": i.reason, "weight": i.weight}
                for i in self.items
            ],
            "skipped": [{"kind": k, "id": i, "why": w} for k, i, w in self.skipped],
            "conflicts": [{"winner": w, "losers": list(ls)} for w, ls in self.conflicts],
        }


def episode_weight(episode: Episode, now: datetime, *, referenced: bool = False) -> float | None:
    """Return the age weight of an episode, or None when it is archived.

    ≤ 7 days 1.0, ≤ 30 days 0.7, ≤ 90 days 0.4, older archived; an episode referenced by a
    pattern keeps full weight and a severity-1 episode is never archived.
    """
    if referenced:
        return REFERENCED_WEIGHT
    age_days = (now - episode.date).total_seconds() / SECONDS_PER_DAY
    for max_age, weight in DECAY_BANDS:
        if age_days <= max_age:
            return weight
    return SEVERE_FLOOR_WEIGHT if episode.severity == SEVERE else None


def archive_cutoff(now: datetime) -> datetime:
    """Return the date before which an ordinary episode is archived."""
    return now - timedelta(days=DECAY_BANDS[-1][0])


def pattern_matches(profile: TaskProfile, pattern: Pattern) -> bool:
    """Tell whether ``pattern``'s trigger matches the task's features."""
    return pattern.trigger.matches(
        task_type=profile.task_type,
        files_affected=profile.files_affected,
        has_tests=profile.has_tests,
        production=profile.production,
        features=profile.features,
    )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_FIELD_CHARS else text[: MAX_FIELD_CHARS - 1] + "…"


def _strategies(profile: TaskProfile, strategies: Iterable[Strategy]) -> list[Injected]:
    keys = profile.keys()
    found: list[tuple[tuple[int, int, int, str], Injected]] = []
    for s in strategies:
        hits = [k for k in keys if k in s.applies_to]
        if hits:
            rank = (PRIORITY_RANK[s.priority], keys.index(hits[0]), s.scope != "project", s.id)
            found.append((rank, Injected("strategy", s.id, f"applies to {hits[0]}")))
    return [item for _, item in sorted(found, key=lambda pair: pair[0])]


def _patterns(
    profile: TaskProfile, patterns: Iterable[Pattern]
) -> tuple[list[Pattern], list[tuple[str, tuple[str, ...]]]]:
    matched = [p for p in patterns if pattern_matches(profile, p)]
    winners: list[Pattern] = []
    conflicts: list[tuple[str, tuple[str, ...]]] = []
    for group in same_trigger_groups(matched):
        best = pick_winner(group)
        winners.append(best)
        if len(group) > 1:
            conflicts.append((best.id, tuple(p.id for p in group if p.id != best.id)))
    winners.sort(key=lambda p: (-p.confidence, -p.last_validated.timestamp(), p.id))
    return winners, conflicts


def _episodes(
    profile: TaskProfile, episodes: Iterable[Episode], patterns: Sequence[Pattern], now: datetime
) -> list[tuple[float, Injected]]:
    referenced = {e for p in patterns for e in p.evidence}
    scored: list[tuple[float, float, Injected]] = []
    for ep in episodes:
        if ep.outcome != "failure":
            continue
        weight = episode_weight(ep, now, referenced=ep.id in referenced)
        if weight is None:
            continue
        shared = set(ep.files) & set(profile.files)
        common = profile.terms & task_terms(
            " ".join((ep.summary, ep.lesson, ep.prevention, *ep.files))
        )
        if ep.task_type == profile.task_type:
            relevance, why = 1.0, f"failure on a {ep.task_type} task"
        elif shared or ep.id in referenced:
            relevance, why = OTHER_TYPE_RELEVANCE, "failure touching the same code"
        elif common:
            relevance = OTHER_TYPE_RELEVANCE
            why = f"failure on related work ({', '.join(sorted(common)[:3])})"
        else:
            continue
        score = weight * (
            relevance
            + (SHARED_FILE_BONUS if shared else 0.0)
            + SEVERITY_BONUS.get(ep.severity, 0.0)
            + TERM_BONUS * min(len(common), MAX_TERM_BONUS_TERMS)
        )
        scored.append(
            (
                score,
                ep.date.timestamp(),
                Injected("episode", ep.id, f"{why}, weight {weight}", weight),
            )
        )
    scored.sort(key=lambda t: (-t[0], -t[1], t[2].id))
    return [(score, item) for score, _, item in scored]


def select_experience(
    profile: TaskProfile,
    *,
    strategies: Sequence[Strategy],
    patterns: Sequence[Pattern],
    episodes: Sequence[Episode],
    now: datetime,
    count_tokens: Callable[[str], int],
    budget: int | None = None,
) -> Selection:
    """Choose and render the experience to inject for ``profile``.

    Args:
        profile: The task profile (type, risk, features).
        strategies: Candidate strategies (project and global).
        patterns: Candidate patterns; retired or superseded ones are ignored.
        episodes: Candidate episodes; only failures are injected, for high risk only.
        now: The current time (for episode decay).
        count_tokens: Token counter used for the budget.
        budget: Token budget; the risk level's ``RISK_BUDGETS`` entry when None.
    """
    limit = RISK_BUDGETS[profile.risk] if budget is None else budget
    density = DENSITY[profile.risk]
    chosen_patterns, conflicts = _patterns(profile, patterns)
    candidates: list[tuple[Injected, int]] = []  # (item, per-kind cap)
    candidates += [(i, density.strategies) for i in _strategies(profile, strategies)]
    candidates += [
        (
            Injected(
                "pattern",
                p.id,
                f"trigger matched ({p.trigger.describe()}), confidence {p.confidence}/5",
            ),
            density.patterns,
        )
        for p in chosen_patterns
    ]
    if density.episodes:
        candidates += [
            (i, density.episodes) for _, i in _episodes(profile, episodes, patterns, now)
        ]
    records: dict[tuple[str, str], Record] = {("strategy", s.id): s for s in strategies}
    records.update({("pattern", p.id): p for p in patterns})
    records.update({("episode", e.id): e for e in episodes})

    taken: list[Injected] = []
    skipped: list[tuple[str, str, str]] = []
    per_kind: dict[str, int] = {}
    for item, cap in candidates:
        if per_kind.get(item.kind, 0) >= cap or len(taken) >= density.max_items:
            skipped.append((item.kind, item.id, f"density limit for {profile.risk} risk"))
            continue
        trial = render_block(profile, [records[(i.kind, i.id)] for i in [*taken, item]], now)
        if count_tokens(trial) > limit:
            skipped.append((item.kind, item.id, f"over the {limit}-token budget"))
            continue
        taken.append(item)
        per_kind[item.kind] = per_kind.get(item.kind, 0) + 1
    for winner, losers in conflicts:
        skipped.extend(
            ("pattern", loser, f"conflicts with {winner}, which wins") for loser in losers
        )
    considered = {(item.kind, item.id) for item, _ in candidates}
    losing = {("pattern", loser) for _, losers in conflicts for loser in losers}
    skipped += _not_considered(
        profile, strategies, patterns, episodes, now, density, considered | losing
    )
    block = render_block(profile, [records[(i.kind, i.id)] for i in taken], now) if taken else ""
    return Selection(
        risk=profile.risk,
        block=block,
        tokens=count_tokens(block) if block else 0,
        budget=limit,
        items=tuple(taken),
        skipped=tuple(skipped),
        conflicts=tuple(conflicts),
    )


def _not_considered(
    profile: TaskProfile,
    strategies: Sequence[Strategy],
    patterns: Sequence[Pattern],
    episodes: Sequence[Episode],
    now: datetime,
    density: Density,
    considered: set[tuple[str, str]],
) -> list[tuple[str, str, str]]:
    """Say why each record that never became a candidate was left out (at most MAX_SKIPPED).

    The records left out for their kind (patterns or episodes at a risk that takes none)
    come first, then the ones that did not apply to this task.
    """
    reasons: list[tuple[str, str, str]] = []
    for s in strategies:
        if ("strategy", s.id) not in considered:
            applies = ", ".join(sorted(s.applies_to)[:3]) or "nothing"
            reasons.append(("strategy", s.id, f"applies to {applies}, not to this task"))
    for p in patterns:
        if ("pattern", p.id) in considered:
            continue
        if p.status == "retired":
            why = "retired (its confidence fell to the floor)"
        elif p.superseded_by:
            why = f"superseded by {p.superseded_by}"
        elif not density.patterns:
            why = f"no patterns at {profile.risk} risk"
        elif pattern_matches(profile, p):
            why = "matched, but another pattern of its trigger wins"
        else:
            why = f"trigger did not match ({p.trigger.describe()})"
        reasons.append(("pattern", p.id, why))
    referenced = {e for p in patterns for e in p.evidence}
    for ep in episodes:
        if ("episode", ep.id) in considered:
            continue
        if ep.outcome != "failure":
            why = f"a {ep.outcome}: only failures are injected"
        elif not density.episodes:
            why = f"episodes are injected at high risk only (this task: {profile.risk})"
        elif episode_weight(ep, now, referenced=ep.id in referenced) is None:
            why = f"archived: older than {DECAY_BANDS[-1][0]:g} days"
        else:
            why = f"unrelated: a {ep.task_type} task, no shared files or terms"
        reasons.append(("episode", ep.id, why))
    order = {"pattern": 0, "episode": 1, "strategy": 2}
    reasons.sort(key=lambda r: (order[r[0]], r[2], r[1]))
    if len(reasons) > MAX_SKIPPED:
        rest = len(reasons) - MAX_SKIPPED + 1
        reasons = [*reasons[: MAX_SKIPPED - 1], ("more", "", f"{rest} more records left out")]
    return reasons


def render_block(profile: TaskProfile, records: Sequence[Record], now: datetime) -> str:
    """Render chosen records as the experience block appended to the user turn."""
    strategies = [r for r in records if isinstance(r, Strategy)]
    patterns = [r for r in records if isinstance(r, Pattern)]
    episodes = [r for r in records if isinstance(r, Episode)]
    lines = [
        f"[Experience memory — {profile.task_type} task, {profile.risk} risk. Lessons from "
        "past work on this project; check them against the current code before acting.]"
    ]
    if strategies:
        lines.append("Strategies:")
        lines += [f"- [{s.priority}] {_clip(s.principle)} ({s.id})" for s in strategies]
    if patterns:
        lines.append("Known failure patterns:")
        for p in patterns:
            mark = "; needs re-analysis" if p.needs_reanalysis else ""
            lines.append(
                f"- {_clip(p.name)} ({p.id}; confidence {p.confidence}/5{mark}; "
                f"when: {p.trigger.describe()})"
            )
            lines += [
                f"  {label}: {_clip(text)}"
                for label, text in (
                    ("failure", p.failure),
                    ("cause", p.root_cause),
                    ("prevention", p.prevention),
                )
                if text
            ]
    if episodes:
        lines.append("Past failures:")
        for e in episodes:
            lines.append(
                f"- {e.date:%Y-%m-%d} | {e.task_type} | severity {e.severity} | "
                f"{_clip(e.summary)} ({e.id})"
            )
            lines += [
                f"  {label}: {_clip(text)}"
                for label, text in (
                    ("lesson", e.lesson),
                    ("prevention", e.prevention),
                    ("files", ", ".join(e.files)),
                )
                if text
            ]
    lines.append("[/Experience memory]")
    return "\n".join(lines)


def retrieval_config() -> dict[str, Any]:
    """Return the Phase 0 settings as JSON (written as ``memory/retrieval_config.json``)."""
    density: Mapping[Risk, Density] = DENSITY
    return {
        "risk_budgets": dict(RISK_BUDGETS),
        "density": {risk: vars(d) for risk, d in density.items()},
        "decay_bands_days": [list(band) for band in DECAY_BANDS],
        "severe_floor_weight": SEVERE_FLOOR_WEIGHT,
        "max_field_chars": MAX_FIELD_CHARS,
    }
