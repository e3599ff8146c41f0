"""The typed values kept in graph state: hits, profile, approval, budget report, pack.

They are ``TypedDict``s, not dataclasses, because checkpoints store state as plain JSON-like
values: a checkpoint written by any release loads in any other, whatever the modules are
called. Producers build them from the frozen dataclasses of the stores (``CodeHit``,
``RelatedSymbol``, ``Pack``); readers get their keys checked by mypy instead of by hope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired

# typing_extensions' TypedDict, not typing's: Pydantic builds the graph's JSON schemas (Studio's
# input and output forms) from these and refuses typing's on Python < 3.12.
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from engram.stores.codeindex import CodeHit
    from engram.stores.relations import RelatedSymbol


class CodeHitValue(TypedDict):
    """A code location found for the task (``CodeHit`` in state)."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float
    source: str
    """Which evidence found it: exact, bm25, dense or fused."""
    key: NotRequired[str]


class RelatedSymbolValue(TypedDict):
    """A symbol reached from the hits through the relation index (``RelatedSymbol`` in state)."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    relation: str
    score: float
    via: str
    key: NotRequired[str]


class TaskProfileValue(TypedDict, total=False):
    """Phase 0 profile of the task (``TaskProfile.to_dict``)."""

    task_type: str
    risk: str
    files_affected: int
    files: list[str]
    has_tests: bool | None
    """None when the project's test suite could not be detected."""
    production: bool
    features: list[str]
    reasons: list[str]


class ApprovalValue(TypedDict, total=False):
    """A human's decision on a high-risk task."""

    action: Literal["approve", "reject", "constrain"]
    approved: bool
    constraints: str
    auto: bool


class InjectedValue(TypedDict):
    """One experience record Phase 0 injected, and why."""

    kind: str
    id: str
    reason: str
    weight: float


class SkippedValue(TypedDict):
    """One experience record Phase 0 left out, and why."""

    kind: str
    id: str
    why: str


class ConflictValue(TypedDict):
    """Experience records that disagreed: the one kept and the ones dropped."""

    winner: str
    losers: list[str]


class SelectionReport(TypedDict):
    """Phase 0's account of the experience it injected."""

    risk: str
    budget: int
    tokens: int
    injected: list[InjectedValue]
    skipped: list[SkippedValue]
    conflicts: list[ConflictValue]


class FactsInjected(TypedDict):
    """The facts in the memory block, and their tokens."""

    ids: list[str]
    tokens: int


class PatternOutcome(TypedDict):
    """A pattern's confidence and status after the task it was applied in."""

    confidence: int
    status: str


class LearnedValue(TypedDict):
    """What ``learn_from_task`` recorded from a finished task."""

    episode: str
    """The episode id (recorded before, for a replay: ``repeated``)."""
    outcome: str
    repeated: NotRequired[bool]
    patterns: NotRequired[dict[str, PatternOutcome]]
    conflicts_flagged: NotRequired[list[str]]
    facts_saved: NotRequired[int]


class MemoryReport(TypedDict, total=False):
    """What went into the memory block and why; later nodes add what was used and learned."""

    risk: str
    reasons: list[str]
    experience: SelectionReport
    facts: FactsInjected
    tokens: int
    used: bool
    learned: LearnedValue


class CompactionEvent(TypedDict):
    """One ``compaction_log`` entry: a clearing or summarizing attempt and what it did."""

    tier: str
    status: Literal["committed", "rolled_back"]
    reason: str
    source: str
    removed_count: int
    removed_ids: list[str]
    tokens_before: int
    tokens_after: int
    chunks: int
    cache_read: int
    calls: int
    user_turns: NotRequired[int]
    trigger: NotRequired[str]


class ActionReview(TypedDict):
    """A decision on one proposed action, by a person or by the approval policy."""

    action: Literal["approve", "reject", "edit", "approve_all"]
    reason: str
    args: dict[str, Any]
    auto: NotRequired[bool]


class BlockedAction(TypedDict, total=False):
    """An action engram refused this turn: the tool, its call, and why."""

    tool: str
    call_id: str
    reason: str


class CommandRun(TypedDict):
    """One check command the verify loop ran."""

    command: str
    exit_code: int | None
    seconds: float


class VerificationValue(TypedDict, total=False):
    """The verify loop's latest result (empty before the first check of a turn)."""

    status: Literal["passed", "failed", "not-run"]
    final: bool
    rounds: int
    reason: str
    commands: list[str]
    runs: list[CommandRun]
    failing: list[str]


class BudgetReport(TypedDict, total=False):
    """The latest token budget check and the decision it took."""

    estimate: int
    raw_estimate: int
    window: int
    trigger: int
    clear: int
    memory_cap: int
    decision: Literal["ok", "clear", "summarize"]
    reported_input: int
    applied: list[Literal["clear", "summarize"]]
    """``BudgetMiddleware``: the tiers this check committed, in order (``decision`` is then the
    tier the final estimate calls for: "ok" only under the clearing threshold)."""
    rolled_back: list[Literal["clear", "summarize"]]
    """``BudgetMiddleware``: the tiers tried and rolled back (they would not have saved enough)."""
    cleared_results: int
    """``BudgetMiddleware``: tool results in the request that are placeholders."""


class PackItemValue(TypedDict):
    """One item of a pack section (its text is in the rendered pack)."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    score: float
    reasons: list[str]
    shown: NotRequired[list[list[int]]]
    """Line runs shown when the slice leaves lines out between them."""


class PackSectionValue(TypedDict):
    """A filled pack section."""

    name: str
    tokens: int
    budget: int
    dropped: int
    items: list[PackItemValue]


class ContextPackValue(TypedDict, total=False):
    """The budgeted context pack in the JSON contract of ``engram context --json``."""

    text: str
    sections: list[PackSectionValue]
    tokens: int
    budget: int
    notes: list[str]
    plan: dict[str, object]


class RulesReport(TypedDict, total=False):
    """Which rules files were read, and whether the total was cut to the rules budget."""

    files: list[dict[str, object]]
    truncated: bool
    total_chars: int


def code_hit_value(hit: CodeHit) -> CodeHitValue:
    """Return a search hit as the value state keeps."""
    return CodeHitValue(
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        symbol=hit.symbol,
        kind=hit.kind,
        score=hit.score,
        source=hit.source,
    )


def related_symbol_value(symbol: RelatedSymbol) -> RelatedSymbolValue:
    """Return a graph neighbour of a hit as the value state keeps."""
    return RelatedSymbolValue(
        path=symbol.path,
        start_line=symbol.start_line,
        end_line=symbol.end_line,
        symbol=symbol.symbol,
        kind=symbol.kind,
        relation=symbol.relation,
        score=symbol.score,
        via=symbol.via,
    )
