"""Assemble a context pack from graph state: fuse the evidence, add rules, memory and history.

Blocking (reads the rules files and source files); the ``pack_context`` node runs it off the
event loop. The ranking, slicing and filling it calls are pure
(``engram.graph.pack._fusion``, ``engram.graph.pack._code_slices``,
``engram.graph.pack._filling``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from engram.graph._context import Context
from engram.graph._project_trust import project_is_trusted
from engram.graph._state import State
from engram.graph._state_values import CodeHitValue, code_hit_value
from engram.graph._tokens import content_text
from engram.graph.pack._budget import BudgetPlan, plan_budget
from engram.graph.pack._code_slices import (
    DEPTH_SHARE,
    SCAN_SHARE,
    SLICE_FILES,
    LinesOf,
    redact_slice,
    slice_items,
)
from engram.graph.pack._filling import Pack, PackItem, fill_pack
from engram.graph.pack._fusion import (
    FUSION_WEIGHTS,
    RankedFile,
    code_map_items,
    evidence_of,
    rank_files,
)
from engram.graph.pack._line_picking import frame_lines, line_terms, title_terms
from engram.graph.pack._rerank import rerank
from engram.graph.pack._text_items import history_items, text_items
from engram.graph.profile import DEFAULT_TASK_TYPE
from engram.stores import LineRedactor, StoreError, redact_secrets
from engram.stores.codeindex import LOCALIZER_SOURCE, is_code_file
from engram.stores.files import PathEscapeError, confine, read_text, relative_posix
from engram.stores.memory import Feedback
from engram.stores.project import load_rules_files

if TYPE_CHECKING:
    from engram.stores.codeindex import FileKind, ProjectCodeIndex, SearchMode


DEEPEN_MODES: tuple[SearchMode, ...] = ("bm25", "dense")
"""Index rankings the pack adds when the searches found too few files: each is its own
evidence list in the fusion (the search branch reports them fused)."""
LOCAL_MODES: tuple[SearchMode, ...] = ("bm25",)
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
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    for message in messages[: max(0, last_human)]:
        if isinstance(message, HumanMessage):
            request = content_text(message.content)
        elif isinstance(message, AIMessage) and not message.tool_calls and request:
            pairs.append((request, content_text(message.content)))
            request = ""
    return pairs


def deepen(
    index: ProjectCodeIndex | None,
    task: str,
    hits: Sequence[CodeHitValue],
    *,
    modes: Sequence[SearchMode] = DEEPEN_MODES,
    prefer: Sequence[FileKind] = ("source",),
) -> tuple[list[CodeHitValue], list[str]]:
    """Add the index's own rankings: the localizer's files, and per-list chunk rankings.

    The per-list rankings (BM25, dense) are added only when the hits in state cover fewer
    files than slices need.

    Returns the extra hit dicts and notes for rankings that failed.
    """
    if index is None or not task.strip() or not index.is_built():
        return [], []
    extra: list[CodeHitValue] = []
    notes: list[str] = []
    try:
        extra.extend(
            code_hit_value(hit)
            for hit in index.localized_chunks(task, files=SLICE_FILES, prefer=prefer)
        )
    except (StoreError, OSError, RuntimeError, ValueError) as exc:
        notes.append(f"pack: file localization unavailable: {exc}")
    if len({h.get("path") for h in hits}) >= SLICE_FILES:
        return extra, notes
    for mode in modes:
        try:
            extra.extend(code_hit_value(hit) for hit in index.search(task, mode=mode, k=DEEPEN_K))
        except (StoreError, OSError, RuntimeError, ValueError) as exc:
            notes.append(f"pack: {mode} ranking unavailable: {exc}")
    return extra, notes


def assemble_pack(
    state: State,
    context: Context,
    *,
    count: Callable[[str], int],
    feedback: Feedback,
    extra: Sequence[CodeHitValue] = (),
    notes: Sequence[str] = (),
    ask: Callable[[str], tuple[str, dict[str, int]]] | None = None,
    no_evidence: str = NO_EVIDENCE_NOTE,
) -> tuple[Pack, BudgetPlan, list[RankedFile]]:
    """Build the pack for ``state`` (blocking: reads rules and source files).

    Args:
        state: Graph state with the retrieval evidence.
        context: Run settings.
        count: Token counter.
        feedback: Budget feedback of this project and task type.
        extra: Hits from the pack's own index rankings (see ``deepen``).
        notes: Notes of this node, added to those already in state.
        ask: One model call that re-ranks the top files (``engram.graph.pack._rerank``);
            None keeps the fused ranking.
        no_evidence: The note of a pack no code evidence reached.

    Returns:
        The filled pack, the budget plan it was filled against, and the fused file ranking.
    """
    root = context.project_path
    plan = plan_budget(
        context.context_window, task_type_of(state), feedback, override=context.budget
    )
    hits = [*state.code_hits, *extra]
    known = sorted({str(h.get("path")) for h in [*hits, *state.related_symbols]})
    named = [str(f) for f in state.task_profile.get("files", []) or []]
    rules = load_rules_files(root, context.home_path, project_rules=project_is_trusted(context))
    in_rules = {f.path for f in rules.files}  # already in the rules section
    evidence = [
        e
        for e in evidence_of(hits, state.related_symbols, resolve_task_files(root, named, known))
        if e.path not in in_rules
    ]
    weights = {**FUSION_WEIGHTS, FUSED_SOURCE: 0.0} if extra else FUSION_WEIGHTS
    is_test_task = state.task_profile.get("task_type") == "test"
    ranked = rank_files(
        evidence, weights=weights, demote_tests=not is_test_task, lead=LOCALIZER_SOURCE
    )
    rerank_note = ""
    if ask is not None:
        ranked, rerank_note = rerank(state.task, ranked, ask)
    lines_of = _line_reader(root)
    candidates: list[PackItem] = [
        *text_items("rules", rules.text),
        *text_items("memory", state.memory_block),
        *code_map_items(ranked),
        *slice_items(
            ranked,
            lines_of,
            count,
            depth_tokens=int(plan.budget * DEPTH_SHARE),
            scan_tokens=int(plan.budget * SCAN_SHARE),
            terms=line_terms(state.task),
            title=title_terms(state.task),
            anchors=frame_lines(state.task, [r.path for r in ranked[:SLICE_FILES]]),
        ),
        *history_items(_exchanges(state.messages), state.task),
    ]
    all_notes = [*state.notes, *notes, *([rerank_note] if rerank_note else [])]
    if not ranked:
        all_notes.append(no_evidence)
    pack = fill_pack(
        candidates,
        plan.budget,
        count,
        notes=all_notes,
        clean=functools.partial(redacted_item, redactor_of=_redactors(lines_of)),
    )
    return pack, plan, ranked


def redacted_item(
    item: PackItem, redactor_of: Callable[[str], LineRedactor | None] | None = None
) -> str:
    """Return the item's text with its credentials redacted (``redacted``).

    The files the pack reads are the project's: a key in ``config.txt`` must not reach the
    model, the checkpoints or the ledger through a slice any more than through ``read_file``.
    A slice of a source file is read as code (see ``redact_secrets``). With ``redactor_of``, a
    slice's lines are redacted among their file's lines around them (``redact_slice``).
    """
    if redactor_of is not None and item.section == "slices":
        redactor = redactor_of(item.path)
        text = redact_slice(item, redactor) if redactor is not None else None
        if text is not None:
            return text
    return redacted(item.text, code=is_code_file(item.path))


def _redactors(lines_of: LinesOf) -> Callable[[str], LineRedactor | None]:
    """Return each file's ``LineRedactor`` (made once per file and pack), None if unreadable."""
    made: dict[str, LineRedactor | None] = {}

    def redactor_of(path: str) -> LineRedactor | None:
        if path not in made:
            lines = lines_of(path)
            made[path] = LineRedactor(lines, code=is_code_file(path)) if lines else None
        return made[path]

    return redactor_of


@functools.lru_cache(maxsize=512)
def redacted(text: str, *, code: bool) -> str:
    """Return ``text`` with its credentials redacted (cached: a session's packs repeat slices).

    512 items are a few packs' worth, a few megabytes at most in a long-lived server.
    """
    return redact_secrets(text, code=code)[0]


def task_type_of(state: State) -> str:
    """Return the Phase 0 task type of the turn (DEFAULT_TASK_TYPE when unprofiled)."""
    return str(state.task_profile.get("task_type") or DEFAULT_TASK_TYPE)
