"""The relation index's data: the relation graph with the per-file facts it was built from."""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from engram.stores.relations._digraph import relation_graph
from engram.stores.relations._names import FileEdges, Resolver
from engram.stores.relations._symbol_tables import ProjectIndex
from engram.stores.relations._symbols import FileFacts


@dataclass
class RelationIndex:
    """A project's code-relation graph with the per-file facts it was built from."""

    facts: dict[str, FileFacts] = field(default_factory=dict)
    edges: dict[str, FileEdges] = field(default_factory=dict)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per-file (size, mtime_ns) seen at the last update; cheap change detection."""
    _graph: nx.MultiDiGraph | None = field(default=None, repr=False, compare=False)
    """The relation graph once built (``graph``); None until something asks for it."""
    _resolver: Resolver | None = field(default=None, repr=False, compare=False)
    _base_id: str = field(default="", repr=False, compare=False)
    """Id of the full save this graph was read from or last written as ("" when none)."""
    _pending: set[str] = field(default_factory=set, repr=False, compare=False)
    """Files whose facts or edges changed since that full save."""

    @property
    def graph(self) -> nx.MultiDiGraph:
        """Return the relation graph: a node per file and definition, an edge per relation.

        Derived from ``facts`` and ``edges``; built on first use (a loaded graph that only
        answers name lookups or a no-op update never pays for it) and kept up to date by
        updates from then on.
        """
        if self._graph is None:
            self._graph = relation_graph(self.facts, self.edges.values())
        return self._graph

    def has_relation_graph(self) -> bool:
        """Return True once ``graph`` was built (updates must then keep it current)."""
        return self._graph is not None

    def warm(self) -> None:
        """Build the relation graph and the resolver's name tables now rather than on first use."""
        self.resolver()
        _ = self.graph

    def unresolved(self, node: str) -> list[tuple[str, str]]:
        """Return (name, relation) of references from ``node`` that did not resolve."""
        path = node.split("::", 1)[0]
        file_edges = self.edges.get(path)
        if file_edges is None:
            return []
        return [(name, rel) for src, name, rel in file_edges.unresolved if src == node]

    def resolver(self) -> Resolver:
        """Return a resolver over the current facts (for slicing and ad-hoc lookups).

        Built on first use and kept with this graph (it is not saved); updates replace it.
        """
        if self._resolver is None:
            self._resolver = Resolver(ProjectIndex.build(self.facts))
        return self._resolver


@dataclass(frozen=True)
class RelationStats:
    """What one build or update did."""

    files: int
    parsed: int
    resolved: int
    removed: int
    nodes: int
    edges: int
    unresolved: int
    seconds: float
