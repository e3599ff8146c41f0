"""The persisted code-relation graph: build it, update it incrementally, save and load it.

Nodes are files (id = posix path) and definitions (id = ``path::Qual.name``); edges carry a
``relation`` of ``contains``, ``imports``, ``inherits``, ``implements`` or ``calls``. The graph
lives in ``<project>/.engram/index/code_graph.pkl`` together with its manifest (per-file size,
mtime and content hash), written atomically. Queries are in ``stores.graph_query``.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import networkx as nx

from stores.errors import IndexCorruptError, IndexNotBuiltError
from stores.graph_extract import FileFacts, extract_file
from stores.graph_index import ProjectIndex, node_id
from stores.graph_resolve import FileEdges, Resolver
from stores.languages import language_of
from stores.walk import ProjectFile, walk_project

__all__ = [
    "GRAPH_FILE",
    "CodeGraph",
    "GraphStats",
    "GraphStore",
    "InMemoryGraphStore",
    "PickleGraphStore",
    "build_graph",
    "graph_store_for",
    "open_code_graph",
    "update_graph",
]

GRAPH_FILE = Path(".engram") / "index" / "code_graph.pkl"
FORMAT_VERSION = 1


@dataclass
class CodeGraph:
    """A project's code-relation graph with the per-file facts it was built from."""

    facts: dict[str, FileFacts] = field(default_factory=dict)
    edges: dict[str, FileEdges] = field(default_factory=dict)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per-file (size, mtime_ns) seen at the last update; cheap change detection."""
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)

    def unresolved(self, node: str) -> list[tuple[str, str]]:
        """Return (name, relation) of references from ``node`` that did not resolve."""
        path = node.split("::", 1)[0]
        file_edges = self.edges.get(path)
        if file_edges is None:
            return []
        return [(name, rel) for src, name, rel in file_edges.unresolved if src == node]

    def resolver(self) -> Resolver:
        """Return a resolver over the current facts (for slicing and ad-hoc lookups)."""
        return Resolver(ProjectIndex.build(self.facts))


@dataclass(frozen=True)
class GraphStats:
    """What one build or update did."""

    files: int
    parsed: int
    resolved: int
    removed: int
    nodes: int
    edges: int
    unresolved: int
    seconds: float


class GraphStore(Protocol):
    """Where a project's graph is kept between runs."""

    def load(self) -> CodeGraph | None:
        """Return the saved graph, or None when none was saved."""
        ...

    def save(self, graph: CodeGraph) -> None:
        """Replace the saved graph with ``graph``."""
        ...


class InMemoryGraphStore:
    """Keeps the graph in memory (tests, throwaway runs)."""

    def __init__(self) -> None:
        self._saved: bytes | None = None

    def load(self) -> CodeGraph | None:
        """Return a copy of the saved graph, or None."""
        return None if self._saved is None else _decode(self._saved)

    def save(self, graph: CodeGraph) -> None:
        """Keep a snapshot of ``graph``."""
        self._saved = _encode(graph)


class PickleGraphStore:
    """Keeps the graph in one pickle file, replaced atomically (temp file + rename)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> CodeGraph | None:
        """Read the graph file; None when it does not exist.

        Raises:
            IndexCorruptError: The file exists but cannot be read as a graph of this version.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        return _decode(data, source=str(self.path))

    def save(self, graph: CodeGraph) -> None:
        """Write the graph to a temp file next to the target, then rename it into place."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".code_graph.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_encode(graph))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _encode(graph: CodeGraph) -> bytes:
    payload = {
        "version": FORMAT_VERSION,
        "facts": graph.facts,
        "edges": graph.edges,
        "stats": graph.stats,
        "graph": graph.graph,
    }
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes, *, source: str = "memory") -> CodeGraph:
    try:
        payload: dict[str, Any] = pickle.loads(data)  # noqa: S301 - our own file
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError) as exc:
        raise IndexCorruptError(f"cannot read code graph {source}: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
        raise IndexCorruptError(f"code graph {source} has an old or unknown format")
    return CodeGraph(payload["facts"], payload["edges"], payload["stats"], payload["graph"])


def graph_store_for(project: Path) -> PickleGraphStore:
    """Return the file store of ``project``'s graph."""
    return PickleGraphStore(project / GRAPH_FILE)


def open_code_graph(project: Path) -> CodeGraph:
    """Load a project's saved graph (the ``code_graph`` resource opener).

    Raises:
        IndexNotBuiltError: No graph has been built for this project yet.
        IndexCorruptError: The saved graph cannot be read.
    """
    graph = graph_store_for(project).load()
    if graph is None:
        raise IndexNotBuiltError(f"no code graph for {project}")
    return graph


def update_graph(project: Path, *, store: GraphStore | None = None) -> GraphStats:
    """Bring ``project``'s saved graph up to date with its files; build it if missing.

    Only files whose content changed are parsed again; only files whose names could now
    resolve differently are resolved again.
    """
    store = store if store is not None else graph_store_for(project)
    graph = store.load() or CodeGraph()
    stats = build_graph(project, graph)
    store.save(graph)
    return stats


def build_graph(project: Path, graph: CodeGraph | None = None) -> GraphStats:
    """Update ``graph`` in place from the files under ``project`` (a fresh graph if None)."""
    started = time.perf_counter()
    graph = graph if graph is not None else CodeGraph()
    files = [f for f in walk_project(project).files if language_of(f.path)]
    current = {f.path: f for f in files}
    removed = [p for p in graph.facts if p not in current]
    changed = [f for f in files if _changed(graph, f)]
    new_facts: dict[str, FileFacts] = {}
    for f in changed:
        try:
            source = f.abs_path.read_bytes()
        except OSError:
            continue
        facts = extract_file(f.path, source, language_of(f.path) or "")
        graph.stats[f.path] = (f.size, f.mtime_ns)
        old = graph.facts.get(f.path)
        if old is None or old.digest != facts.digest:
            new_facts[f.path] = facts
    dirty = set(new_facts) | set(removed)
    affected = _affected(graph, dirty, new_facts) if graph.facts else set()
    for path in removed:
        graph.facts.pop(path, None)
        graph.stats.pop(path, None)
    graph.facts.update(new_facts)
    resolver = Resolver(ProjectIndex.build(graph.facts))
    redo = (dirty | affected) & set(graph.facts) if len(graph.edges) else set(graph.facts)
    _apply(graph, resolver, dirty, redo)
    return GraphStats(
        files=len(graph.facts),
        parsed=len(new_facts),
        resolved=len(redo),
        removed=len(removed),
        nodes=graph.graph.number_of_nodes(),
        edges=graph.graph.number_of_edges(),
        unresolved=sum(len(e.unresolved) for e in graph.edges.values()),
        seconds=time.perf_counter() - started,
    )


def _changed(graph: CodeGraph, f: ProjectFile) -> bool:
    return f.path not in graph.facts or graph.stats.get(f.path) != (f.size, f.mtime_ns)


def _affected(graph: CodeGraph, dirty: set[str], new_facts: dict[str, FileFacts]) -> set[str]:
    """Return unchanged files whose edges or unresolved names may change with ``dirty``."""
    g = graph.graph
    out: set[str] = set()
    names: set[str] = set()
    for path in dirty:
        for facts in (graph.facts.get(path), new_facts.get(path)):
            if facts is None:
                continue
            names |= {d.name for d in facts.definitions} | {path.rsplit("/", 1)[-1].split(".")[0]}
            if facts.language in ("java", "go"):
                # Same-package names need no import; Go methods attach across files.
                folder = path.rsplit("/", 1)[0] if "/" in path else ""
                out |= {p for p, f in graph.facts.items()
                        if f.language == facts.language and (p.rsplit("/", 1)[0] if "/" in p
                                                             else "") == folder}
        for node in _file_nodes(graph, path):
            if node in g:
                out |= {src.split("::", 1)[0] for src, _ in g.in_edges(node)}
    for path, file_edges in graph.edges.items():
        if any(name.rsplit(".", 1)[-1] in names or name.rsplit("/", 1)[-1] in names
               for _, name, _ in file_edges.unresolved):
            out.add(path)
    return out - dirty


def _file_nodes(graph: CodeGraph, path: str, *, stale: bool = False) -> list[str]:
    """Return the node ids of ``path`` as the graph currently holds them."""
    if stale:
        return [path, *(n for n in graph.graph.nodes if n.startswith(path + "::"))] \
            if path in graph.graph else []
    facts = graph.facts.get(path)
    defs = facts.definitions if facts is not None else ()
    return [path, *(node_id(path, d.qualname) for d in defs)]


def _apply(graph: CodeGraph, resolver: Resolver, dirty: set[str], redo: Iterable[str]) -> None:
    """Replace the nodes of dirty files and the edges of re-resolved files."""
    g = graph.graph
    for path in dirty:
        g.remove_nodes_from(_file_nodes(graph, path, stale=True))
        if path not in graph.facts:
            graph.edges.pop(path, None)
            continue
        facts = graph.facts[path]
        g.add_node(path, kind="file", name=path.rsplit("/", 1)[-1], qualname="", path=path,
                   start_line=1, end_line=facts.line_count, language=facts.language)
        for d in facts.definitions:
            g.add_node(node_id(path, d.qualname), kind=d.kind, name=d.name, qualname=d.qualname,
                       path=path, start_line=d.start_line, end_line=d.end_line,
                       language=facts.language)
    for path in redo:
        old = graph.edges.get(path)
        if old is not None:
            for src, dst, rel in old.edges:
                if g.has_edge(src, dst, key=rel):
                    g.remove_edge(src, dst, key=rel)
        fresh = resolver.file_edges(path)
        graph.edges[path] = fresh
        for src, dst, rel in fresh.edges:
            if src in g and dst in g:
                g.add_edge(src, dst, key=rel, relation=rel)
