"""Node ``search_semantic``: hybrid search over the code index when exact hits are weak."""

from __future__ import annotations

from langgraph.runtime import Runtime

from engram.graph import ConfigError, Context, Deps, State, StateUpdate, code_hit_value
from engram.graph.retrieval import vector_outage
from engram.stores import IndexNotBuiltError, StoreError, mask_url_passwords

SEMANTIC_K = 10
"""Chunks taken from the index per task."""

NO_INDEX_NOTE = "semantic search skipped: no code index — run `engram index`"


def search_semantic(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Search the code index (BM25 + dense + exact, fused) for the task text.

    A missing index or an unavailable backend becomes a note; the turn goes on with the
    exact hits it already has. A project with no index is indexed in the background on first
    use (``Deps.index_on_first_use``), so later turns search it.
    """
    if not state.task.strip():
        return {}
    try:
        index = deps.code_index(runtime.context)
        if index is None:
            return {"notes": [NO_INDEX_NOTE]}
        if not index.is_built():
            return {"notes": [_no_index_note(runtime.context, deps)]}
        hits = index.search(state.task, mode="hybrid", k=SEMANTIC_K)
        other = index.embedded_with_other_model()
    except IndexNotBuiltError:
        return {"notes": [_no_index_note(runtime.context, deps)]}
    except (StoreError, OSError, RuntimeError, ValueError) as exc:
        hint = getattr(exc, "hint", "")
        note = mask_url_passwords(
            f"semantic search unavailable: {exc}" + (f" ({hint})" if hint else "")
        )
        return {"notes": [note]}
    update: StateUpdate = {"code_hits": [code_hit_value(hit) for hit in hits]}
    notes = [outage] if (outage := vector_outage(index)) else []
    if other:
        notes.append(
            f"semantic search ran without embeddings: the index was embedded "
            f"with {other} — run `engram index` to re-embed"
        )
    if notes:
        update["notes"] = notes
    return update


def _no_index_note(context: Context, deps: Deps) -> str:
    """Return the note of a turn that found no code index, starting its first-use build."""
    try:
        note = deps.index_on_first_use(context)
    except ConfigError as exc:
        return f"semantic search skipped: no code index, and {exc} ({exc.hint})"
    return f"semantic search skipped: {note}" if note else NO_INDEX_NOTE
