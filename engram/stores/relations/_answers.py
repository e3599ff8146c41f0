"""Answers to one structure question: lookup, relation or path, with the reason if none."""

from __future__ import annotations

from dataclasses import dataclass

from engram.stores.relations._kinds import RELATIONS
from engram.stores.relations._queries import (
    DEFAULT_IMPACT_DEPTH,
    GraphQuery,
    Related,
    SymbolInfo,
    SymbolMatch,
)


@dataclass(frozen=True)
class Answer:
    """A complete answer to one structure question, ready to render."""

    symbol: SymbolMatch
    relation: str
    depth: int
    related: tuple[Related, ...] = ()
    path: tuple[SymbolInfo, ...] = ()
    target: SymbolMatch | None = None
    problem: str = ""
    """Why there is no result: unknown or ambiguous symbol, missing ``to``; empty if none."""


def describe_match(match: SymbolMatch) -> str:
    """Explain a lookup that did not give exactly one symbol."""
    if match.ambiguous:
        options = ", ".join(m.id for m in match.matches[:10])
        more = f" (+{len(match.matches) - 10} more)" if len(match.matches) > 10 else ""
        return f"{match.query!r} is ambiguous: {options}{more}; pass a qualified name or path"
    hint = f"; did you mean {', '.join(match.suggestions)}?" if match.suggestions else ""
    return f"no symbol matches {match.query!r}{hint}"


def answer(queries: GraphQuery, symbol: str, relation: str, depth: int = 1, to: str = "") -> Answer:
    """Look ``symbol`` up and answer ``relation`` about it (``path`` needs ``to``).

    Raises:
        ValueError: ``relation`` is not one of ``RELATIONS``.
    """
    if relation not in RELATIONS:
        raise ValueError(f"unknown relation {relation!r}; use one of {', '.join(RELATIONS)}")
    if relation == "impact" and depth <= 1:
        depth = DEFAULT_IMPACT_DEPTH
    match = queries.find(symbol)
    if match.found is None:
        return Answer(match, relation, depth, problem=describe_match(match))
    if relation == "path":
        if not to:
            return Answer(match, relation, depth, problem="relation 'path' needs a target symbol")
        target = queries.find(to)
        if target.found is None:
            return Answer(match, relation, depth, target=target, problem=describe_match(target))
        chain = queries.path(match.found.id, target.found.id)
        problem = "" if chain else f"no path between {match.found.id} and {target.found.id}"
        return Answer(match, relation, depth, path=tuple(chain), target=target, problem=problem)
    related = queries.related(match.found.id, relation, depth)  # type: ignore[arg-type]
    return Answer(match, relation, depth, related=tuple(related))
