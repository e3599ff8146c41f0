"""Symbols related to search hits through the relation index, with their dependency slices."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from engram.stores.relations._model import RelationIndex
from engram.stores.relations._queries import GraphQueries
from engram.stores.relations._slices import slice_symbol
from engram.stores.relations._symbols import CLASS_KINDS

RELATION_WEIGHTS = {
    "callees": 0.6,
    "callers": 0.5,
    "subclasses": 0.4,
    "implementations": 0.4,
    "dependencies": 0.3,
}
"""Score of a neighbour relative to the hit it was reached from, per relation."""
SLICE_DECAY = 0.7
"""Score factor per dependency step of a slice piece."""
MAX_PER_RELATION = 8


@dataclass(frozen=True)
class HitSpan:
    """Where a search hit points."""

    path: str
    start_line: int
    end_line: int
    score: float = 1.0


@dataclass(frozen=True)
class RelatedSymbol:
    """A symbol reached from a hit: a graph neighbour or a piece of the hit's slice."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    relation: str
    """callers, callees, subclasses, implementations, dependencies or slice:<reason>."""
    score: float
    via: str = ""
    """Node id of the hit's symbol it was reached from."""


def node_at(relation_index: RelationIndex, path: str, line: int) -> str | None:
    """Return the innermost definition of ``path`` spanning ``line`` (the file if none)."""
    facts = relation_index.facts.get(path)
    if facts is None:
        return None
    best: tuple[int, str] | None = None
    for d in facts.definitions:
        if d.start_line <= line <= d.end_line:
            size = d.end_line - d.start_line
            if best is None or size < best[0]:
                best = (size, f"{path}::{d.qualname}")
    return best[1] if best else path


def related_to_hits(
    relation_index: RelationIndex,
    hits: Iterable[HitSpan],
    project: Path,
    *,
    slice_budget: int,
    count_tokens: Callable[[str], int] | None = None,
) -> list[RelatedSymbol]:
    """Return graph neighbours and slice pieces of the hits' symbols, best first."""
    queries = GraphQueries(relation_index)
    resolver = relation_index.resolver() if slice_budget > 0 else None
    out: dict[tuple[str, str], RelatedSymbol] = {}
    seen_nodes: set[str] = set()
    for hit in hits:
        node = node_at(relation_index, hit.path, max(1, hit.start_line))
        if node is None or node in seen_nodes:
            continue
        seen_nodes.add(node)
        info = queries.symbol(node)
        if info is None:
            continue
        relations = ["callees", "callers"]
        relations += ["subclasses", "implementations"] if info.kind in CLASS_KINDS else []
        relations += ["dependencies"] if info.kind == "file" else []
        for relation in relations:
            found = queries.related(node, relation, 1)  # type: ignore[arg-type]
            reached = [r.symbol for r in found if r.symbol is not None]
            for symbol in reached[:MAX_PER_RELATION]:
                score = hit.score * RELATION_WEIGHTS[relation]
                _keep(
                    out,
                    RelatedSymbol(
                        symbol.path,
                        symbol.start_line,
                        symbol.end_line,
                        symbol.qualname or symbol.path,
                        symbol.kind,
                        relation,
                        round(score, 6),
                        node,
                    ),
                )
        if resolver is not None and info.kind in ("function", "method"):
            piece_slice = slice_symbol(
                relation_index,
                node,
                project,
                budget=slice_budget,
                count_tokens=count_tokens,
                resolver=resolver,
            )
            for piece in piece_slice.pieces[1:]:
                score = hit.score * SLICE_DECAY**piece.depth
                _keep(
                    out,
                    RelatedSymbol(
                        piece.path,
                        piece.start_line,
                        piece.end_line,
                        piece.symbol,
                        piece.kind,
                        f"slice:{piece.reason}",
                        round(score, 6),
                        node,
                    ),
                )
    return sorted(out.values(), key=lambda r: (-r.score, r.path, r.start_line))


def _keep(out: dict[tuple[str, str], RelatedSymbol], entry: RelatedSymbol) -> None:
    key = (entry.path, f"{entry.start_line}-{entry.end_line}:{entry.symbol}")
    old = out.get(key)
    if old is None or entry.score > old.score:
        out[key] = entry
