"""Structure queries over a ``RelationIndex``: symbol lookup, relations, impact and paths."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import networkx as nx

from engram.stores.relations._kinds import RELATIONS, Relation
from engram.stores.relations._model import RelationIndex

DEPENDENCY_EDGES = frozenset({"imports", "calls", "inherits", "implements"})
DEFAULT_IMPACT_DEPTH = 3
MAX_SUGGESTIONS = 5
SPLIT = re.compile(r"::|[./\\#]")


@dataclass(frozen=True)
class SymbolInfo:
    """A node of the graph: a file or a definition."""

    id: str
    kind: str
    name: str
    qualname: str
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class SymbolMatch:
    """Result of a fuzzy lookup: the matches, or suggestions when nothing matched."""

    query: str
    matches: tuple[SymbolInfo, ...] = ()
    suggestions: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        """Return whether several symbols match and the caller must choose."""
        return len(self.matches) > 1

    @property
    def found(self) -> SymbolInfo | None:
        """Return the single match, or None when there is none or several."""
        return self.matches[0] if len(self.matches) == 1 else None


@dataclass(frozen=True)
class Related:
    """A symbol reached from the queried one; ``symbol`` is None for an unresolved name."""

    name: str
    relation: str
    depth: int
    symbol: SymbolInfo | None = None
    parent: str = ""
    """Node id it was reached from (the queried node at depth 1)."""


class GraphQuery(Protocol):
    """What callers ask of a relation index."""

    def find(self, symbol: str) -> SymbolMatch:
        """Look a symbol up by id, path, qualified or bare name."""
        ...

    def related(self, node: str, relation: Relation, depth: int = 1) -> list[Related]:
        """Return the nodes reached from ``node`` through ``relation`` up to ``depth`` hops."""
        ...

    def path(self, source: str, target: str) -> list[SymbolInfo]:
        """Return the shortest chain of nodes linking two symbols (empty when none)."""
        ...

    def symbol(self, node: str) -> SymbolInfo | None:
        """Return one node's description."""
        ...


class GraphQueries:
    """``GraphQuery`` over a loaded ``RelationIndex``."""

    def __init__(self, relation_index: RelationIndex) -> None:
        self.relation_index = relation_index
        self.g: nx.MultiDiGraph = relation_index.graph
        self._by_name: dict[str, list[str]] | None = None

    def symbol(self, node: str) -> SymbolInfo | None:
        """Return one node's description, or None when it is not in the graph."""
        if node not in self.g:
            return None
        a = self.g.nodes[node]
        return SymbolInfo(
            node, a["kind"], a["name"], a["qualname"], a["path"], a["start_line"], a["end_line"]
        )

    def find(self, symbol: str) -> SymbolMatch:
        """Look a symbol up: exact id, file path, then dotted/qualified name suffixes."""
        query = symbol.strip()
        if query in self.g:
            return SymbolMatch(query, (self._info(query),))
        parts = [p for p in SPLIT.split(query) if p]
        if not parts:
            return SymbolMatch(query)
        files = [
            n
            for n in self._names().get(query.rsplit("/", 1)[-1], [])
            if self.g.nodes[n]["kind"] == "file" and n.endswith(query)
        ]
        if files:
            return SymbolMatch(query, tuple(self._info(n) for n in sorted(files)))
        for fold in (False, True):
            hits = [n for n in self._candidates(parts[-1], fold) if _suffix_match(n, parts, fold)]
            if hits:
                return SymbolMatch(query, tuple(self._info(n) for n in sorted(hits)))
        close = difflib.get_close_matches(parts[-1], list(self._names()), n=MAX_SUGGESTIONS)
        return SymbolMatch(query, suggestions=tuple(close))

    def related(self, node: str, relation: Relation, depth: int = 1) -> list[Related]:
        """Return what ``node`` reaches through ``relation``, nearest first.

        Raises:
            ValueError: ``relation`` is not one of ``RELATIONS`` (``path`` has its own method).
        """
        depth = max(1, depth)
        if relation == "callers":
            return self._walk([node], depth, {"calls"}, reverse=True, relation="calls")
        if relation == "callees":
            out = self._walk([node], depth, {"calls"}, reverse=False, relation="calls")
            return out + [
                Related(name, "calls", 1, None, node)
                for name, rel in self.relation_index.unresolved(node)
                if rel == "calls"
            ]
        if relation == "subclasses":
            return self._walk([node], depth, {"inherits"}, reverse=True, relation="inherits")
        if relation == "implementations":
            return self._implementations(node, depth)
        if relation in ("dependencies", "dependents"):
            # A class depends on what its methods call and on its bases; a file keeps to its
            # own edges (its imports), which already stand for what it contains.
            seeds = [node, *self._members(node)]
            found = self._walk(seeds, depth, DEPENDENCY_EDGES, reverse=relation == "dependents")
            return [r for r in found if r.symbol is None or r.symbol.id not in seeds]
        if relation == "impact":
            seeds = [node, *self._descendants(node)]
            found = self._walk(seeds, depth, DEPENDENCY_EDGES, reverse=True)
            return [r for r in found if r.symbol is not None and r.symbol.id not in seeds]
        raise ValueError(f"unknown relation {relation!r}; use one of {', '.join(RELATIONS)}")

    def path(self, source: str, target: str) -> list[SymbolInfo]:
        """Return the shortest directed chain, else the shortest undirected one, else []."""
        if source not in self.g or target not in self.g:
            return []
        try:
            nodes = nx.shortest_path(self.g, source, target)
        except nx.NetworkXNoPath:
            nodes = _undirected_path(self.g, source, target)
        return [self._info(n) for n in nodes]

    # -- helpers -----------------------------------------------------------------------

    def _info(self, node: str) -> SymbolInfo:
        info = self.symbol(node)
        if info is None:
            raise KeyError(node)
        return info

    def _names(self) -> dict[str, list[str]]:
        if self._by_name is None:
            by_name: dict[str, list[str]] = {}
            for n, a in self.g.nodes(data=True):
                by_name.setdefault(a["name"], []).append(n)
            self._by_name = by_name
        return self._by_name

    def _candidates(self, name: str, fold: bool) -> Iterable[str]:
        names = self._names()
        if not fold:
            return names.get(name, [])
        lowered = name.lower()
        return [n for key, nodes in names.items() if key.lower() == lowered for n in nodes]

    def _walk(
        self,
        seeds: list[str],
        depth: int,
        relations: set[str] | frozenset[str],
        *,
        reverse: bool,
        relation: str = "",
    ) -> list[Related]:
        seen = set(seeds)
        frontier = [s for s in seeds if s in self.g]
        out: list[Related] = []
        for level in range(1, depth + 1):
            nxt: list[str] = []
            for node in frontier:
                edges = (
                    self.g.in_edges(node, keys=True)
                    if reverse
                    else self.g.out_edges(node, keys=True)
                )
                for src, dst, rel in edges:
                    other = src if reverse else dst
                    if rel not in relations or other in seen:
                        continue
                    seen.add(other)
                    nxt.append(other)
                    info = self._info(other)
                    out.append(
                        Related(info.qualname or info.path, relation or rel, level, info, node)
                    )
            frontier = nxt
        return out

    def _members(self, node: str) -> list[str]:
        """Return what a class (or function) defines inside it; nothing for a file."""
        if node not in self.g or self.g.nodes[node]["kind"] == "file":
            return []
        return self._descendants(node)

    def _descendants(self, node: str) -> list[str]:
        out: list[str] = []
        stack = [node] if node in self.g else []
        while stack:
            current = stack.pop()
            for _, child, rel in self.g.out_edges(current, keys=True):
                if rel == "contains":
                    out.append(child)
                    stack.append(child)
        return out

    def _implementations(self, node: str, depth: int) -> list[Related]:
        info = self.symbol(node)
        if info is None:
            return []
        if info.kind in ("class", "interface", "struct"):
            direct = self._walk(
                [node], 1, {"implements", "inherits"}, reverse=True, relation="implements"
            )
            more = (
                self._walk(
                    [r.symbol.id for r in direct if r.symbol],
                    depth - 1,
                    {"inherits"},
                    reverse=True,
                    relation="inherits",
                )
                if depth > 1
                else []
            )
            return direct + [
                Related(r.name, r.relation, r.depth + 1, r.symbol, r.parent) for r in more
            ]
        # A method: the same-named methods of the classes below its owner (overrides).
        owners = [src for src, _, rel in self.g.in_edges(node, keys=True) if rel == "contains"]
        out: list[Related] = []
        for owner in owners:
            for below in self._implementations(owner, depth):
                if below.symbol is None:
                    continue
                for _, child, rel in self.g.out_edges(below.symbol.id, keys=True):
                    if rel == "contains" and self.g.nodes[child]["name"] == info.name:
                        child_info = self._info(child)
                        out.append(
                            Related(child_info.qualname, "overrides", below.depth, child_info, node)
                        )
        return out


def _undirected_path(g: nx.MultiDiGraph, source: str, target: str) -> list[str]:
    """Bidirectional BFS ignoring edge direction, on the adjacency dicts (no graph view)."""
    if source == target:
        return [source]
    parents: list[dict[str, str | None]] = [{source: None}, {target: None}]
    frontiers = [[source], [target]]
    while frontiers[0] and frontiers[1]:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        nxt: list[str] = []
        for node in frontiers[side]:
            for other in (*g.succ[node], *g.pred[node]):
                if other in parents[side]:
                    continue
                parents[side][other] = node
                if other in parents[1 - side]:
                    return _join(parents, other)
                nxt.append(other)
        frontiers[side] = nxt
    return []


def _join(parents: list[dict[str, str | None]], meet: str) -> list[str]:
    left: list[str] = []
    node: str | None = meet
    while node is not None:
        left.append(node)
        node = parents[0][node]
    right: list[str] = []
    node = parents[1][meet]
    while node is not None:
        right.append(node)
        node = parents[1][node]
    return list(reversed(left)) + right


def _suffix_match(node: str, parts: list[str], fold: bool) -> bool:
    """Whether the query parts are a component-wise suffix of the node's dotted location."""
    path, _, qualname = node.partition("::")
    stem = path.rsplit(".", 1)[0]
    components = [c for c in stem.split("/") if c]
    if components and components[-1] in ("__init__", "index"):
        components.pop()
    components += [c.split("/")[0] for c in qualname.split(".")] if qualname else []
    if fold:
        components = [c.lower() for c in components]
        parts = [p.lower() for p in parts]
    return len(parts) <= len(components) and components[-len(parts) :] == parts
