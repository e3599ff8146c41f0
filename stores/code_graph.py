"""The persisted code-relation graph: build it, update it incrementally, save and load it.

Nodes are files (id = posix path) and definitions (id = ``path::Qual.name``); edges carry a
``relation`` of ``contains``, ``imports``, ``inherits``, ``implements`` or ``calls``. The graph
lives in ``<project>/.engram/index/code_graph.pkl`` together with its manifest (per-file size,
mtime and content hash), written atomically. An incremental update writes only what changed
since that file was written, to ``code_graph.delta.pkl`` (also atomically); loading applies it.
Queries are in ``stores.graph_query``.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import posixpath
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import networkx as nx

from stores.errors import IndexCorruptError, IndexNotBuiltError
from stores.graph_extract import FileFacts, extract_file, plain
from stores.graph_index import ProjectIndex
from stores.graph_resolve import FileEdges, Resolver
from stores.graph_update import affected_files, apply_changes, replace_edges, replace_nodes
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
FORMAT_VERSION = 4
"""Version of the saved layout; a graph saved by another version is rebuilt, not read."""
DELTA_MAX_FILES = 64
DELTA_MAX_FRACTION = 0.05
"""A delta covering more files than both limits is folded into a full rewrite instead."""


@dataclass
class CodeGraph:
    """A project's code-relation graph with the per-file facts it was built from."""

    facts: dict[str, FileFacts] = field(default_factory=dict)
    edges: dict[str, FileEdges] = field(default_factory=dict)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per-file (size, mtime_ns) seen at the last update; cheap change detection."""
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    _resolver: Resolver | None = field(default=None, repr=False, compare=False)
    _saved_facts: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    """Each file's facts as last saved; saving again re-encodes only the files that changed."""
    _base_id: str = field(default="", repr=False, compare=False)
    """Id of the full save this graph was read from or last written as ("" when none)."""
    _pending: set[str] = field(default_factory=set, repr=False, compare=False)
    """Files whose facts or edges changed since that full save."""

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
    """Keeps the graph in a pickle file plus a small delta file, each replaced atomically.

    A save after a small change writes only the changed files' facts and edges (the delta,
    tagged with the id of the full file it applies to); a large change, or no full file yet,
    rewrites the full file and drops the delta. A crash between the two leaves a delta whose
    id no longer matches, which loading ignores.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.delta_path = path.with_name(f"{path.stem}.delta{path.suffix}")

    def load(self) -> CodeGraph | None:
        """Read the graph file and apply its delta; None when no graph was saved.

        Raises:
            IndexCorruptError: A file exists but cannot be read as a graph of this version.
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        graph = _decode(data, source=str(self.path))
        try:
            delta = self.delta_path.read_bytes()
        except FileNotFoundError:
            return graph
        _apply_delta(graph, delta, source=str(self.delta_path))
        return graph

    def save(self, graph: CodeGraph) -> None:
        """Write the delta since the full file, or the full file when the delta grew large."""
        limit = max(DELTA_MAX_FILES, int(len(graph.facts) * DELTA_MAX_FRACTION))
        if graph._base_id and len(graph._pending) <= limit and self.path.exists():
            _write_atomically(self.delta_path, _encode_delta(graph))
            return
        _write_atomically(self.path, _encode(graph))
        self.delta_path.unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temp file next to ``path``, flush it to disk, rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _gc_paused() -> Iterator[None]:
    # Unpickling creates ~10^5 containers; the cyclic GC would rescan them over and over
    # (about 60% of load time on a large tree) although none of them is garbage.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _encode(graph: CodeGraph) -> bytes:
    saved = graph._saved_facts
    with _gc_paused():
        for path, facts in graph.facts.items():
            if path not in saved:
                saved[path] = pickle.dumps(plain(facts), protocol=pickle.HIGHEST_PROTOCOL)
    for path in [p for p in saved if p not in graph.facts]:
        del saved[path]
    graph._base_id = uuid.uuid4().hex
    graph._pending.clear()
    payload = {
        "version": FORMAT_VERSION,
        "id": graph._base_id,
        "facts": saved,
        "edges": graph.edges,
        "stats": graph.stats,
        "graph": graph.graph,
    }
    with _gc_paused():
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes, *, source: str = "memory") -> CodeGraph:
    try:
        with _gc_paused():
            payload: dict[str, Any] = pickle.loads(data)  # noqa: S301 - our own file
            if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
                raise IndexCorruptError(f"code graph {source} has an old or unknown format")
            blobs: dict[str, bytes] = payload["facts"]
            facts = {path: pickle.loads(blob) for path, blob in blobs.items()}  # noqa: S301
            # The graph lives as long as the process: move it out of the collector's view,
            # or the first collection after loading scans all of it (seconds on a large tree).
            gc.freeze()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
            KeyError) as exc:
        raise IndexCorruptError(f"cannot read code graph {source}: {exc}") from exc
    return CodeGraph(facts, payload["edges"], payload["stats"], payload["graph"],
                     _saved_facts=dict(blobs), _base_id=payload["id"])


def _encode_delta(graph: CodeGraph) -> bytes:
    facts: dict[str, bytes | None] = {}
    for path in graph._pending:
        current = graph.facts.get(path)
        if current is None:
            facts[path] = None
            continue
        if path not in graph._saved_facts:
            graph._saved_facts[path] = pickle.dumps(plain(current),
                                                    protocol=pickle.HIGHEST_PROTOCOL)
        facts[path] = graph._saved_facts[path]
    payload = {
        "version": FORMAT_VERSION,
        "base": graph._base_id,
        "facts": facts,
        "edges": {p: graph.edges.get(p) for p in graph._pending},
        "stats": graph.stats,
    }
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def _apply_delta(graph: CodeGraph, data: bytes, *, source: str) -> None:
    """Apply a saved delta to the graph read from its full file (a stale delta is ignored)."""
    try:
        with _gc_paused():
            payload: dict[str, Any] = pickle.loads(data)  # noqa: S301 - our own file
            if not isinstance(payload, dict) or payload.get("version") != FORMAT_VERSION:
                raise IndexCorruptError(f"code graph delta {source} has an unknown format")
            if payload["base"] != graph._base_id:
                return
            blobs: dict[str, bytes | None] = payload["facts"]
            facts = {p: None if b is None else pickle.loads(b)  # noqa: S301
                     for p, b in blobs.items()}
            apply_changes(graph, facts, payload["edges"])
            gc.freeze()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
            KeyError) as exc:
        raise IndexCorruptError(f"cannot read code graph delta {source}: {exc}") from exc
    for path, blob in blobs.items():
        if blob is None:
            graph._saved_facts.pop(path, None)
        else:
            graph._saved_facts[path] = blob
    graph.stats = payload["stats"]
    graph._pending = set(blobs) | set(payload["edges"])


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


def update_graph(
    project: Path,
    *,
    store: GraphStore | None = None,
    files: Sequence[ProjectFile] | None = None,
) -> GraphStats:
    """Bring ``project``'s saved graph up to date with its files; build it if missing.

    Only files whose content changed are parsed again; only files whose names could now
    resolve differently are resolved again. A saved graph that cannot be read (corrupt, or
    written by another version of engram) is rebuilt from scratch.

    Args:
        project: Project root.
        store: Where the graph is kept; the project's ``code_graph.pkl`` by default.
        files: The project walk if the caller already has it (``walk_project(project).files``),
            so that ``engram index`` walks the tree once for both indexes. Walked here by
            default, trusting the saved graph about which unchanged files are text.
    """
    store = store if store is not None else graph_store_for(project)
    try:
        graph = store.load() or CodeGraph()
    except IndexCorruptError:
        graph = CodeGraph()
    if files is None:
        files = walk_project(project, known=graph.stats).files
    before = dict(graph.stats)
    stats = build_graph(project, graph, files=files)
    if graph.stats != before or stats.removed or stats.parsed:
        store.save(graph)
    return stats


def build_graph(
    project: Path, graph: CodeGraph | None = None, *, files: Sequence[ProjectFile] | None = None
) -> GraphStats:
    """Update ``graph`` in place from the files under ``project`` (a fresh graph if None).

    ``files`` is the project walk when the caller has it already; by default the project is
    walked here.
    """
    with _gc_paused():
        return _build(project, graph, files)


def _build(
    project: Path, graph: CodeGraph | None, walked: Sequence[ProjectFile] | None
) -> GraphStats:
    started = time.perf_counter()
    graph = graph if graph is not None else CodeGraph()
    walked = walked if walked is not None else walk_project(project).files
    files = [f for f in walked if _language(f.path)]
    current = {f.path: f for f in files}
    removed = [p for p in graph.facts if p not in current]
    changed = [f for f in files if _changed(graph, f)]
    new_facts: dict[str, FileFacts] = {}
    for f in changed:
        try:
            source = f.abs_path.read_bytes()
        except OSError:
            continue
        facts = extract_file(f.path, source, _language(f.path) or "")
        graph.stats[f.path] = (f.size, f.mtime_ns)
        old = graph.facts.get(f.path)
        if old is None or old.digest != facts.digest:
            new_facts[f.path] = facts
    dirty = set(new_facts) | set(removed)
    if not dirty and graph.edges:
        return _stats(graph, 0, 0, 0, started)
    affected = affected_files(graph, dirty, new_facts) if graph.edges else set()
    old_facts = {p: graph.facts[p] for p in dirty if p in graph.facts}
    for path in removed:
        graph.facts.pop(path, None)
        graph._saved_facts.pop(path, None)
        graph.stats.pop(path, None)
    graph.facts.update(new_facts)
    for path in new_facts:
        graph._saved_facts.pop(path, None)
    resolver = Resolver(ProjectIndex.build(graph.facts))
    graph._resolver = resolver
    redo = (dirty | affected) & set(graph.facts) if graph.edges else set(graph.facts)
    replace_nodes(graph.graph, old_facts, {p: graph.facts.get(p) for p in dirty})
    replace_edges(graph, resolver, redo)
    graph._pending |= dirty | redo
    return _stats(graph, len(new_facts), len(redo), len(removed), started)


def _stats(graph: CodeGraph, parsed: int, resolved: int, removed: int,
           started: float) -> GraphStats:
    return GraphStats(
        files=len(graph.facts),
        parsed=parsed,
        resolved=resolved,
        removed=removed,
        nodes=graph.graph.number_of_nodes(),
        # number_of_edges() sums node degrees through views: ~10x slower on a large graph.
        edges=sum(len(keys) for _, targets in graph.graph.adjacency() for keys in targets.values()),
        unresolved=sum(len(e.unresolved) for e in graph.edges.values()),
        seconds=time.perf_counter() - started,
    )


@functools.lru_cache(maxsize=256)
def _language_of_suffix(suffix: str) -> str | None:
    return language_of(f"file{suffix}")


def _language(path: str) -> str | None:
    """``language_of`` through a cache by suffix (it is called for every file of the walk)."""
    return _language_of_suffix(posixpath.splitext(path)[1])


def _changed(graph: CodeGraph, f: ProjectFile) -> bool:
    return f.path not in graph.facts or graph.stats.get(f.path) != (f.size, f.mtime_ns)
