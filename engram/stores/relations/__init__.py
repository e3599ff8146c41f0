"""The relation index: symbol extraction, name resolution, queries, PageRank and slices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.relations._answers import Answer, answer, describe_match
    from engram.stores.relations._index import (
        open_relation_index,
        refresh_relation_index,
        update_relation_index,
    )
    from engram.stores.relations._kinds import RELATIONS
    from engram.stores.relations._model import RelationIndex
    from engram.stores.relations._persistence import GRAPH_FILE, graph_store_for
    from engram.stores.relations._queries import GraphQueries, SymbolInfo
    from engram.stores.relations._related import HitSpan, RelatedSymbol, related_to_hits
    from engram.stores.relations._shared_facts import SharedFacts
    from engram.stores.relations._slices import Slice, slice_symbol

__all__ = [
    "Answer",
    "GRAPH_FILE",
    "GraphQueries",
    "HitSpan",
    "RELATIONS",
    "RelatedSymbol",
    "RelationIndex",
    "SharedFacts",
    "Slice",
    "SymbolInfo",
    "answer",
    "describe_match",
    "graph_store_for",
    "open_relation_index",
    "refresh_relation_index",
    "related_to_hits",
    "slice_symbol",
    "update_relation_index",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.relations._answers": ("Answer", "answer", "describe_match"),
        "engram.stores.relations._index": (
            "open_relation_index",
            "refresh_relation_index",
            "update_relation_index",
        ),
        "engram.stores.relations._kinds": ("RELATIONS",),
        "engram.stores.relations._model": ("RelationIndex",),
        "engram.stores.relations._persistence": ("GRAPH_FILE", "graph_store_for"),
        "engram.stores.relations._queries": ("GraphQueries", "SymbolInfo"),
        "engram.stores.relations._related": ("HitSpan", "RelatedSymbol", "related_to_hits"),
        "engram.stores.relations._shared_facts": ("SharedFacts",),
        "engram.stores.relations._slices": ("Slice", "slice_symbol"),
    },
)
