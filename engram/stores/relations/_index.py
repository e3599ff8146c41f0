"""The persisted code-relation graph: build it, update it incrementally, open the saved one.

Nodes are files (id = posix path) and definitions (id = ``path::Qual.name``); edges carry a
``relation`` of ``contains``, ``imports``, ``inherits``, ``implements`` or ``calls``. An update
parses only the files whose content changed and resolves again only the files that may now
resolve differently. Saving and loading (``<project>/.engram/index/relation_index.jsonl`` and its
delta) are in ``engram.stores.relations._persistence``; queries are in
``engram.stores.relations._queries``.
"""

from __future__ import annotations

import functools
import logging
import posixpath
import time
from collections.abc import Sequence
from pathlib import Path

from engram.stores._errors import IndexCorruptError, IndexNotBuiltError
from engram.stores.files import ProjectFile, language_of, read_regular, walk_project
from engram.stores.project import ProjectState
from engram.stores.relations._digraph import gc_paused, relation_counts
from engram.stores.relations._extraction import extract_file
from engram.stores.relations._model import RelationIndex, RelationStats
from engram.stores.relations._names import Resolver
from engram.stores.relations._persistence import GraphStore, graph_store_for
from engram.stores.relations._shared_facts import SharedFacts
from engram.stores.relations._symbol_tables import ProjectIndex
from engram.stores.relations._symbols import FileFacts
from engram.stores.relations._update import affected_files, replace_edges, replace_nodes

log = logging.getLogger(__name__)


def open_relation_index(project: Path, state: ProjectState) -> RelationIndex:
    """Load a project's saved graph (the ``relation_index`` resource opener).

    A saved graph that cannot be trusted or read (corrupt, another version, shipped with the
    repository) is rebuilt from the files, with a one-line notice.

    Raises:
        IndexNotBuiltError: No graph has been built for this project yet.
    """
    store = graph_store_for(project, state)
    try:
        graph = store.load()
    except IndexCorruptError:
        update_relation_index(project, state, store=store)  # says why, and rebuilds
        graph = store.load()
    if graph is None:
        raise IndexNotBuiltError(f"no relation index for {project}")
    return graph


def update_relation_index(
    project: Path,
    state: ProjectState,
    *,
    store: GraphStore | None = None,
    files: Sequence[ProjectFile] | None = None,
    shared: SharedFacts | None = None,
) -> RelationStats:
    """Bring ``project``'s saved graph up to date with its files; build it if missing.

    Only files whose content changed are parsed again; only files whose names could now
    resolve differently are resolved again. A saved graph that cannot be read (corrupt, or
    written by another version of engram) is rebuilt from scratch.

    Args:
        project: Project root.
        state: The project's state folder (under ENGRAM_HOME), which keeps the graph.
        store: Where the graph is kept; the state folder's ``relation_index.jsonl`` by default.
        files: The project walk if the caller already has it (``walk_project(project).files``),
            so that ``engram index`` walks the tree once for both indexes. Walked here by
            default, trusting the saved graph about which unchanged files are text.
        shared: Facts the code index's chunking pass extracted from the trees it parsed;
            a file whose facts are there for its current content is not parsed again.
    """
    store = store if store is not None else graph_store_for(project, state)
    try:
        graph = store.load() or RelationIndex()
    except IndexCorruptError as exc:
        log.warning("engram: %s; rebuilding the relation index", exc)
        graph = RelationIndex()
    return _bring_up_to_date(project, store, graph, files, shared)


def refresh_relation_index(
    project: Path,
    state: ProjectState,
    *,
    files: Sequence[ProjectFile],
    shared: SharedFacts | None = None,
    graph: RelationIndex | None = None,
) -> RelationIndex | None:
    """Update and save the project's relation index as ``update_relation_index`` does.

    ``graph`` is the project's graph a process keeps open, updated in place (no second copy
    is loaded); without it the saved graph is loaded. Returns the updated graph, or None when
    none was built yet (nothing is built here).

    Raises:
        IndexCorruptError: The saved graph cannot be read.
    """
    store = graph_store_for(project, state)
    graph = graph if graph is not None else store.load()
    if graph is not None:
        _bring_up_to_date(project, store, graph, files, shared)
    return graph


def _bring_up_to_date(
    project: Path,
    store: GraphStore,
    graph: RelationIndex,
    files: Sequence[ProjectFile] | None,
    shared: SharedFacts | None,
) -> RelationStats:
    if files is None:
        files = walk_project(project, known=graph.stats).files
    before = dict(graph.stats)
    stats = build_relation_index(project, graph, files=files, shared=shared)
    if graph.stats != before or stats.removed or stats.parsed:
        store.save(graph)
    return stats


def build_relation_index(
    project: Path,
    graph: RelationIndex | None = None,
    *,
    files: Sequence[ProjectFile] | None = None,
    shared: SharedFacts | None = None,
) -> RelationStats:
    """Update ``graph`` in place from the files under ``project`` (a fresh graph if None).

    ``files`` is the project walk when the caller has it already; by default the project is
    walked here. ``shared`` holds facts extracted already (see ``update_relation_index``).
    """
    with gc_paused():
        return _build(project, graph, files, shared)


def _build(
    project: Path,
    graph: RelationIndex | None,
    walked: Sequence[ProjectFile] | None,
    shared: SharedFacts | None,
) -> RelationStats:
    started = time.perf_counter()
    graph = graph if graph is not None else RelationIndex()
    walked = walked if walked is not None else walk_project(project).files
    files = [f for f in walked if _language(f.path)]
    current = {f.path: f for f in files}
    removed = [p for p in graph.facts if p not in current]
    changed = [f for f in files if _changed(graph, f)]
    new_facts: dict[str, FileFacts] = {}
    for f in changed:
        try:
            source = read_regular(f.abs_path)
        except OSError:
            continue
        facts = shared.take(f.path, source) if shared is not None else None
        if facts is None:
            facts = extract_file(f.path, source, _language(f.path) or "")
        graph.stats[f.path] = (f.size, f.mtime_ns)
        old = graph.facts.get(f.path)
        if old is None or old.digest != facts.digest:
            new_facts[f.path] = facts
    dirty = set(new_facts) | set(removed)
    if not dirty and graph.edges:
        return _stats(graph, 0, 0, 0, started)
    g = graph.graph  # built from the facts as they were before this update
    affected = affected_files(graph, dirty, new_facts) if graph.edges else set()
    old_facts = {p: graph.facts[p] for p in dirty if p in graph.facts}
    for path in removed:
        graph.facts.pop(path, None)
        graph.stats.pop(path, None)
    graph.facts.update(new_facts)
    resolver = Resolver(ProjectIndex.build(graph.facts))
    graph._resolver = resolver
    redo = (dirty | affected) & set(graph.facts) if graph.edges else set(graph.facts)
    replace_nodes(g, old_facts, {p: graph.facts.get(p) for p in dirty})
    replace_edges(graph, resolver, redo)
    graph._pending |= dirty | redo
    return _stats(graph, len(new_facts), len(redo), len(removed), started)


def _stats(
    graph: RelationIndex, parsed: int, resolved: int, removed: int, started: float
) -> RelationStats:
    return RelationStats(
        files=len(graph.facts),
        parsed=parsed,
        resolved=resolved,
        removed=removed,
        **_counts(graph),
        unresolved=sum(len(e.unresolved) for e in graph.edges.values()),
        seconds=time.perf_counter() - started,
    )


def _counts(graph: RelationIndex) -> dict[str, int]:
    """Count nodes and edges, from the facts when the relation graph was not built."""
    if not graph.has_relation_graph():
        nodes, edges = relation_counts(graph.facts, graph.edges.values())
        return {"nodes": nodes, "edges": edges}
    g = graph.graph
    # number_of_edges() sums node degrees through views: ~10x slower on a large graph.
    return {
        "nodes": g.number_of_nodes(),
        "edges": sum(len(keys) for _, targets in g.adjacency() for keys in targets.values()),
    }


@functools.lru_cache(maxsize=256)
def _language_of_suffix(suffix: str) -> str | None:
    return language_of(f"file{suffix}")


def _language(path: str) -> str | None:
    """``language_of`` through a cache by suffix (it is called for every file of the walk)."""
    return _language_of_suffix(posixpath.splitext(path)[1])


def _changed(graph: RelationIndex, f: ProjectFile) -> bool:
    return f.path not in graph.facts or graph.stats.get(f.path) != (f.size, f.mtime_ns)
