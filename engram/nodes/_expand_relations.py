"""Node ``expand_relations``: add graph neighbours and dependency slices of the top code hits."""

from __future__ import annotations

from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State, StateUpdate, related_symbol_value
from engram.stores import IndexNotBuiltError, StoreError
from engram.stores.relations import HitSpan, related_to_hits

TOP_HITS = 5
"""Code hits (best first) whose symbols are expanded through the graph."""

SLICE_BUDGET = 1_500
"""Token budget of the dependency slice of each expanded hit."""

NO_GRAPH_NOTE = "graph expansion skipped: no relation index — run `engram index`"


def expand_relations(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Add callers, callees, subclasses and slice pieces of the top hits to ``related_symbols``.

    A missing or unreadable graph becomes a note; the turn goes on without graph context.
    """
    hits = sorted(state.code_hits, key=lambda h: -float(h.get("score") or 0.0))[:TOP_HITS]
    spans = [
        HitSpan(
            str(h["path"]),
            int(h.get("start_line") or 1),
            int(h.get("end_line") or 1),
            float(h.get("score") or 1.0),
        )
        for h in hits
        if h.get("path")
    ]
    if not spans:
        return {}
    try:
        relation_index = deps.relation_index(runtime.context)
        if relation_index is None:
            return {"notes": [NO_GRAPH_NOTE]}
        related = related_to_hits(
            relation_index,
            spans,
            runtime.context.project_path,
            slice_budget=SLICE_BUDGET,
            count_tokens=deps.count_tokens,
        )
    except IndexNotBuiltError:
        return {"notes": [NO_GRAPH_NOTE]}
    except (StoreError, OSError, KeyError, ValueError) as exc:
        hint = getattr(exc, "hint", "")
        return {"notes": [f"graph expansion unavailable: {exc}" + (f" ({hint})" if hint else "")]}
    return {"related_symbols": [related_symbol_value(r) for r in related]}
