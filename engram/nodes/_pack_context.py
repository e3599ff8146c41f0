"""Node ``pack_context``: fuse the retrieval evidence and fill the budgeted context pack."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from engram.graph import CodeHitValue, Context, Deps, State, StateUpdate, count_text
from engram.graph.pack import (
    DEEPEN_MODES,
    LOCAL_MODES,
    NO_EVIDENCE_NOTE,
    RERANK_TIMEOUT_MS,
    BudgetPlan,
    Pack,
    assemble_pack,
    deepen,
    model_asker,
    record_usage,
    render_pack,
    task_type_of,
)
from engram.graph.retrieval import branch_limit_ms, call_bounded, record_branch_time
from engram.stores import IndexNotBuiltError, StoreError, mask_url_passwords
from engram.stores.codeindex import kinds_for_task
from engram.stores.memory import BaseStorePackFeedback, Feedback, PackFeedbackStore
from engram.stores.project import memory_key

RANKINGS = "pack_rankings"
"""The pack's own call on the index, bounded and sized like a retrieval branch."""
SEMANTIC_SKIPPED = (
    "<note>semantic search was skipped for this request (it failed or took longer than its "
    "limit); the code above comes from exact and BM25 search only</note>"
)
"""Told to the model, and so to the user, when the semantic branch dropped out."""

BUILDING_NOTE = (
    "no code evidence reached the pack yet: the project's first code index is being built in "
    "the background, and the next runs search it"
)
"""Said instead of ``NO_EVIDENCE_NOTE`` while that build runs (``Deps.first_use``)."""

DELIVERED_ELSEWHERE = ("rules", "memory")
"""Sections an agent turn already receives (rules in the system prompt, memory appended by
``call_model``); in agent mode they are counted in the pack but not repeated in its text."""


NO_MODEL_NOTE = (
    "agent mode needs a chat model and none is configured, so the agent did not run; the "
    "context pack is in `context_pack`. To fix: set `model` (and `base_url`) in the run "
    "context, or ENGRAM_MODEL (and ENGRAM_BASE_URL) where the graph runs; or set `mode` to "
    "`context` to ask for the context pack only."
)


def index_rankings(
    state: State, context: Context, deps: Deps
) -> tuple[list[CodeHitValue], list[str]]:
    """Open the code index and take its per-list rankings for the task (blocking)."""
    try:
        index = deps.code_index(context)
    except IndexNotBuiltError:
        return [], []  # the search branch already said to run `engram index`
    except (StoreError, OSError) as exc:
        note = f"pack: code index unavailable ({exc}); packing the evidence in state"
        return [], [mask_url_passwords(note)]
    # After the semantic branch hung or failed, keep to the local BM25 ranking.
    degraded = "search_semantic" in state.degraded_branches
    return deepen(
        index,
        state.task,
        state.code_hits,
        modes=LOCAL_MODES if degraded else DEEPEN_MODES,
        prefer=kinds_for_task(state.task_profile.get("task_type")),
    )


def _feedback_store(runtime: Runtime[Context], deps: Deps) -> PackFeedbackStore | None:
    store: BaseStore | None = runtime.store if runtime.store is not None else deps.store
    return BaseStorePackFeedback(store) if store is not None else None


def _build(
    state: State, context: Context, deps: Deps, feedback_store: PackFeedbackStore | None
) -> tuple[Pack, BudgetPlan, list[str]]:
    count = deps.count_tokens or count_text
    notes: list[str] = []
    key = memory_key(context.project_path, context.home_path)
    task_type = task_type_of(state)
    feedback = Feedback()
    if feedback_store is not None:
        try:
            feedback = feedback_store.get(key, task_type)
        except StoreError as exc:
            notes.append(f"pack feedback unreadable, using the default budget factors: {exc}")
    extra: list[CodeHitValue] = []
    # This run started the project's first index: a small one is ready in seconds.
    waited = deps.first_use.wait(context.project_path) if deps.open_code_index else 0.0
    if waited:
        notes.append(f"pack: waited {waited:.1f} s for the project's first index, and used it")
    # The index backend may hang (a Chroma server, a first open): bound it like a branch.
    limit_ms = branch_limit_ms(context, RANKINGS)
    started = time.perf_counter()
    try:
        extra, ranking_notes = call_bounded(lambda: index_rankings(state, context, deps), limit_ms)
        notes.extend(ranking_notes)
        record_branch_time(context, RANKINGS, int((time.perf_counter() - started) * 1000))
    except TimeoutError:
        record_branch_time(context, RANKINGS, 0)  # the first-call allowance is spent
        notes.append(
            f"pack: index rankings timed out after {limit_ms} ms; packing the evidence in state"
        )
    ask, rerank_notes = _reranker(context, deps)
    notes.extend(rerank_notes)
    # While the first index is being built, "run `engram index`" is not what to do.
    building = deps.first_use.running(context.project_path)
    pack, plan, _ = assemble_pack(
        state,
        context,
        count=count,
        feedback=feedback,
        extra=extra,
        notes=notes,
        ask=ask,
        no_evidence=BUILDING_NOTE if building else NO_EVIDENCE_NOTE,
    )
    stale = _changed_slices(pack, context, deps)
    if stale:
        notes.append(stale)
        pack = replace(pack, notes=(*pack.notes, stale))
    if feedback_store is not None and plan.source == "formula":
        updated = record_usage(
            feedback, task_type=task_type, planned=plan.budget, actual=pack.tokens
        )
        try:
            feedback_store.put(key, task_type, updated)
        except StoreError as exc:
            notes.append(f"pack feedback not saved: {exc}")
    return pack, plan, notes


def _changed_slices(pack: Pack, context: Context, deps: Deps) -> str:
    """Say which sliced files changed on disk since the index was updated ("" for none)."""
    section = pack.section("slices")
    if section is None or not section.items:
        return ""
    index = deps.opened_code_index(context)  # opened by the branches, or not used at all
    check = getattr(index, "changed_since_indexed", None)
    if check is None:
        return ""
    try:
        changed = check(i.path for i in section.items)
    except (StoreError, OSError):
        return ""  # the branches already said what is wrong with the index
    if not changed:
        return ""
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return (
        f"pack: {shown} changed since the last `engram index`: the code map and the lines "
        "sliced come from the index, which has the file as it was (run `engram index`)"
    )


def _reranker(
    context: Context, deps: Deps
) -> tuple[Callable[[str], tuple[str, dict[str, int]]] | None, list[str]]:
    """Return the one bounded model call that re-ranks the pack's top files, if it is on."""
    if not context.rerank_files:
        return None, []
    try:
        model = deps.model_factory(context)
    except (ValueError, ImportError, OSError) as exc:
        return None, [f"pack: re-ranking is on but the model cannot be built ({exc})"]
    if model is None:
        return None, ["pack: re-ranking is on but no model is configured (ENGRAM_MODEL)"]
    ask = model_asker(model)
    return (lambda prompt: call_bounded(lambda: ask(prompt), RERANK_TIMEOUT_MS)), []


def pack_context(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Fill the context pack from the evidence in state within the planned budget.

    In agent mode the pack text leaves out rules and memory (the system prompt and
    ``call_model`` deliver them); in context mode the text is the whole pack. Agent mode
    without a model ends here too, saying so in a reply and a note.
    """
    context = runtime.context
    pack, plan, notes = _build(state, context, deps, _feedback_store(runtime, deps))
    skip = DELIVERED_ELSEWHERE if context.mode == "agent" else ()
    text = render_pack(pack.sections, skip=skip)
    if "search_semantic" in state.degraded_branches and text:
        text += "\n\n" + SEMANTIC_SKIPPED
    pack = replace(pack, text=text)
    if deps.on_pack is not None:
        deps.on_pack(pack)  # the Pack itself, for callers in this process (``build_pack``)
    packed = pack.to_dict()
    packed["plan"] = plan.to_dict()
    update: StateUpdate = {"context_pack": packed, "notes": notes}
    if context.mode == "agent" and not context.model:
        update["notes"] = [*notes, NO_MODEL_NOTE]
        update["messages"] = [AIMessage(content=NO_MODEL_NOTE)]
    return update
