"""Node ``pack_context``: fuse the retrieval evidence and fill the budgeted context pack."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from graph.branches import call_bounded, degraded_branches
from graph.budget import content_text, count_text
from graph.context import Context
from graph.deps import Deps
from graph.pack import Pack, PackItem, fill_pack, render_pack
from graph.pack_budget import BudgetPlan, plan_budget, record_usage
from graph.pack_rank import (
    FUSION_WEIGHTS,
    SLICE_FILES,
    RankedFile,
    code_map_items,
    evidence_of,
    rank_files,
    slice_items,
)
from graph.pack_text import history_items, text_items
from graph.state import State
from stores.errors import IndexNotBuiltError, StoreError
from stores.pack_feedback import BaseStorePackFeedback, Feedback, PackFeedbackStore
from stores.paths import PathEscapeError, confine, relative_posix
from stores.project_key import project_key
from stores.rules import load_rules_files
from stores.walk import read_text

__all__ = [
    "DELIVERED_ELSEWHERE",
    "assemble_pack",
    "deepen",
    "index_rankings",
    "pack_context",
    "resolve_task_files",
]

DELIVERED_ELSEWHERE = ("rules", "memory")
"""Sections an agent turn already receives (rules in the system prompt, memory appended by
``call_model``); in agent mode they are counted in the pack but not repeated in its text."""

DEFAULT_TASK_TYPE = "feature"
"""Task type assumed when Phase 0 did not profile the task."""

DEEPEN_MODES = ("bm25", "dense")
"""Index rankings the pack adds when the searches found too few files: each is its own
evidence list in the fusion (the search branch reports them fused)."""
LOCAL_MODES = ("bm25",)
"""Rankings that need no vector backend (used when the semantic branch degraded)."""
DEEPEN_K = 50
"""Chunks taken from each deepening ranking."""
FUSED_SOURCE = "fused"
"""Source of hybrid hits: a fusion of exact, BM25 and dense. Once the pack has those lists
separately it drops the fused one (its chunks would count twice, and the state reducer keeps
only one source per chunk, so the fused list misses exactly the chunks others found too)."""

NO_EVIDENCE_NOTE = (
    "no code evidence reached the pack (no index, or every retrieval branch degraded); "
    "run `engram index` for a code map and slices"
)


def resolve_task_files(root: Path, names: Sequence[str], known: Sequence[str]) -> list[str]:
    """Map file names from the task text to project paths (relative posix).

    A name that is a path inside the project is kept; otherwise the first known path ending
    with ``/name`` is used. Names that match nothing are dropped.
    """
    out: list[str] = []
    for name in names:
        try:
            found = confine(root, name)
        except PathEscapeError:
            found = None
        if found is not None and found.is_file():
            out.append(relative_posix(root, found))
            continue
        suffix = "/" + name.lstrip("./")
        match = next((p for p in sorted(known) if ("/" + p).endswith(suffix)), None)
        if match:
            out.append(match)
    return list(dict.fromkeys(out))


def _line_reader(root: Path) -> Callable[[str], Sequence[str] | None]:
    cache: dict[str, Sequence[str] | None] = {}

    def lines_of(path: str) -> Sequence[str] | None:
        if path not in cache:
            try:
                cache[path] = read_text(confine(root, path)).splitlines()
            except (PathEscapeError, OSError):
                cache[path] = None
        return cache[path]

    return lines_of


def _exchanges(messages: Sequence[AnyMessage]) -> list[tuple[str, str]]:
    """Return earlier (request, final answer) pairs, leaving out the current request."""
    pairs: list[tuple[str, str]] = []
    request = ""
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)),
                     default=-1)
    for message in messages[: max(0, last_human)]:
        if isinstance(message, HumanMessage):
            request = content_text(message.content)
        elif isinstance(message, AIMessage) and not message.tool_calls and request:
            pairs.append((request, content_text(message.content)))
            request = ""
    return pairs


def deepen(
    index: Any,
    task: str,
    hits: Sequence[dict[str, Any]],
    *,
    modes: Sequence[str] = DEEPEN_MODES,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Add per-list index rankings when the hits in state cover fewer files than slices need.

    Returns the extra hit dicts and notes for rankings that failed.
    """
    if index is None or not task.strip() or len({h.get("path") for h in hits}) >= SLICE_FILES:
        return [], []
    if not index.is_built():
        return [], []
    extra: list[dict[str, Any]] = []
    notes: list[str] = []
    for mode in modes:
        try:
            extra.extend(asdict(hit) for hit in index.search(task, mode=mode, k=DEEPEN_K))
        except (StoreError, OSError, RuntimeError, ValueError) as exc:
            notes.append(f"pack: {mode} ranking unavailable: {exc}")
    return extra, notes


def index_rankings(
    state: State, context: Context, deps: Deps
) -> tuple[list[dict[str, Any]], list[str]]:
    """Open the code index and take its per-list rankings for the task (blocking)."""
    try:
        index = deps.resource("code_index", context)
    except IndexNotBuiltError:
        return [], []  # the search branch already said to run `engram index`
    except (StoreError, OSError) as exc:
        return [], [f"pack: code index unavailable ({exc}); packing the evidence in state"]
    # After the semantic branch hung or failed, keep to the local BM25 ranking.
    degraded = "search_semantic" in degraded_branches(state.notes)
    return deepen(index, state.task, state.code_hits,
                  modes=LOCAL_MODES if degraded else DEEPEN_MODES)


def assemble_pack(
    state: State,
    context: Context,
    *,
    count: Callable[[str], int],
    feedback: Feedback,
    extra: Sequence[dict[str, Any]] = (),
    notes: Sequence[str] = (),
) -> tuple[Pack, BudgetPlan, list[RankedFile]]:
    """Build the pack for ``state`` (blocking: reads rules and source files).

    Args:
        state: Graph state with the retrieval evidence.
        context: Run settings.
        count: Token counter.
        feedback: Budget feedback of this project and task type.
        extra: Hits from the pack's own index rankings (see ``deepen``).
        notes: Notes of this node, added to those already in state.

    Returns:
        The filled pack, the budget plan it was filled against, and the fused file ranking.
    """
    root = context.project_path
    task_type = str(state.task_profile.get("task_type") or DEFAULT_TASK_TYPE)
    plan = plan_budget(context.context_window, task_type, feedback, override=context.budget)
    hits = [*state.code_hits, *extra]
    known = sorted({str(h.get("path")) for h in [*hits, *state.related_symbols]})
    named = [str(f) for f in state.task_profile.get("files", []) or []]
    rules = load_rules_files(root, context.home_path)
    in_rules = {f.path for f in rules.files}  # already in the rules section
    evidence = [
        e for e in evidence_of(hits, state.related_symbols, resolve_task_files(root, named, known))
        if e.path not in in_rules
    ]
    weights = {**FUSION_WEIGHTS, FUSED_SOURCE: 0.0} if extra else FUSION_WEIGHTS
    ranked = rank_files(evidence, weights=weights)
    candidates: list[PackItem] = [
        *text_items("rules", rules.text),
        *text_items("memory", state.memory_block),
        *code_map_items(ranked),
        *slice_items(ranked, _line_reader(root), count),
        *history_items(_exchanges(state.messages), state.task),
    ]
    all_notes = [*state.notes, *notes]
    if not ranked:
        all_notes.append(NO_EVIDENCE_NOTE)
    return fill_pack(candidates, plan.budget, count, notes=all_notes), plan, ranked


def _feedback_store(runtime: Runtime[Context], deps: Deps) -> PackFeedbackStore | None:
    store: BaseStore | None = runtime.store if runtime.store is not None else deps.store
    return BaseStorePackFeedback(store) if store is not None else None


def _build(
    state: State, context: Context, deps: Deps, feedback_store: PackFeedbackStore | None
) -> tuple[Pack, BudgetPlan, list[str]]:
    count = deps.count_tokens or count_text
    notes: list[str] = []
    key = project_key(context.project_path)
    task_type = str(state.task_profile.get("task_type") or DEFAULT_TASK_TYPE)
    feedback = Feedback()
    if feedback_store is not None:
        try:
            feedback = feedback_store.get(key, task_type)
        except StoreError as exc:
            notes.append(f"pack feedback unreadable, using the default budget factors: {exc}")
    extra: list[dict[str, Any]] = []
    try:
        # The index backend may hang (a Chroma server, a first open): bound it like a branch.
        extra, ranking_notes = call_bounded(
            lambda: index_rankings(state, context, deps), context.branch_timeout_ms
        )
        notes.extend(ranking_notes)
    except TimeoutError:
        notes.append(f"pack: index rankings timed out after {context.branch_timeout_ms} ms; "
                     "packing the evidence in state")
    pack, plan, _ = assemble_pack(state, context, count=count, feedback=feedback, extra=extra,
                                  notes=notes)
    if feedback_store is not None and plan.source == "formula":
        updated = record_usage(feedback, task_type=task_type, planned=plan.budget,
                               actual=pack.tokens)
        try:
            feedback_store.put(key, task_type, updated)
        except StoreError as exc:
            notes.append(f"pack feedback not saved: {exc}")
    return pack, plan, notes


async def pack_context(state: State, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Fill the context pack from the evidence in state within the planned budget.

    In agent mode the pack text leaves out rules and memory (the system prompt and
    ``call_model`` deliver them); in context mode the text is the whole pack.
    """
    context = runtime.context
    # Reading files and a server-backed store are blocking; keep them off the event loop.
    pack, plan, notes = await asyncio.to_thread(
        _build, state, context, deps, _feedback_store(runtime, deps)
    )
    skip = DELIVERED_ELSEWHERE if context.mode == "agent" else ()
    packed = pack.to_dict()
    packed["text"] = render_pack(pack.sections, skip=skip)
    packed["plan"] = plan.to_dict()
    return {"context_pack": packed, "notes": notes}
