"""Incremental graph maintenance: which files to resolve again, and swapping nodes and edges.

A changed file gets new facts; other files need resolving again only when something they
resolved against changed: a definition they point at vanished or changed its signature (kind,
bases, field types, return type, arity), a name they could not resolve is now defined, the
file's imports or exports changed (re-exports), or, for Java and Go, a same-package name
appeared or vanished. Node ids are stable (``path::Qual.name``), so nodes that survive keep
their incoming edges.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

import networkx as nx

from engram.stores.relations._model import RelationIndex
from engram.stores.relations._names import FileEdges, Resolver
from engram.stores.relations._symbol_tables import node_id
from engram.stores.relations._symbols import CLASS_KINDS, Definition, FileFacts

NAME_PARTS = re.compile(r"[./]")
SAME_PACKAGE_LANGUAGES = frozenset({"java", "go"})


def _signature(d: Definition) -> tuple[object, ...]:
    """What other files' resolution may depend on (line numbers excluded)."""
    fields = d.var_types if d.kind in CLASS_KINDS else ()
    return (d.kind, d.parent, d.bases, fields, d.returns, d.arity, d.receiver)


def _defs(facts: FileFacts | None) -> dict[str, Definition]:
    return {d.qualname: d for d in facts.definitions} if facts is not None else {}


def affected_files(
    graph: RelationIndex, dirty: set[str], new_facts: Mapping[str, FileFacts]
) -> set[str]:
    """Return files outside ``dirty`` whose edges may change (call before replacing facts)."""
    g = graph.graph
    out: set[str] = set()
    new_names: set[str] = set()
    for path in dirty:
        old, new = graph.facts.get(path), new_facts.get(path)
        old_defs, new_defs = _defs(old), _defs(new)
        changed = {
            q
            for q, d in old_defs.items()
            if q not in new_defs or _signature(new_defs[q]) != _signature(d)
        }
        added = {q for q in new_defs if q not in old_defs}
        new_names |= {new_defs[q].name for q in added} | {
            new_defs[q].name for q in changed if q in new_defs
        }
        if old is None:
            new_names.add(posixpath.splitext(posixpath.basename(path))[0])
        targets = [node_id(path, q) for q in changed]
        changed_classes = [node_id(path, q) for q in changed if old_defs[q].kind in CLASS_KINDS]
        targets += _subclass_nodes(g, changed_classes)
        if (
            old is None
            or new is None
            or old.imports != new.imports
            or old.exports != new.exports
            or changed
            or added
        ):
            targets.append(path)  # importers may reach re-exported or new names through it
        for target in targets:
            if target in g:
                out |= {src.split("::", 1)[0] for src, _ in g.in_edges(target)}
        either = new if new is not None else old
        language = either.language if either is not None else ""
        if language in SAME_PACKAGE_LANGUAGES and (changed or added):
            folder = posixpath.dirname(path)
            out |= {
                p
                for p, f in graph.facts.items()
                if f.language == language and posixpath.dirname(p) == folder
            }
    if new_names:
        # A cheap substring screen first; the exact test splits the name into its parts.
        screen = re.compile("|".join(re.escape(n) for n in sorted(new_names))).search
        for path, file_edges in graph.edges.items():
            if any(
                screen(name) and new_names.intersection(NAME_PARTS.split(name))
                for _, name, _ in file_edges.unresolved
            ):
                out.add(path)
    return out - dirty


def _subclass_nodes(g: nx.MultiDiGraph, classes: Iterable[str]) -> list[str]:
    """Return the (transitive) subclasses of ``classes`` and their members."""
    out: list[str] = []
    stack = [c for c in classes if c in g]
    seen = set(stack)
    while stack:
        current = stack.pop()
        for src, _, rel in g.in_edges(current, keys=True):
            if rel in ("inherits", "implements") and src not in seen:
                seen.add(src)
                stack.append(src)
                out.append(src)
                out += [c for _, c, r in g.out_edges(src, keys=True) if r == "contains"]
    return out


def replace_nodes(
    g: nx.MultiDiGraph,
    old_facts: Mapping[str, FileFacts],
    new_facts: Mapping[str, FileFacts | None],
) -> None:
    """Swap the nodes of changed files: drop vanished ones, add or refresh the others."""
    for path, facts in new_facts.items():
        old_ids = {node_id(path, d.qualname) for d in _defs(old_facts.get(path)).values()}
        if facts is None:
            g.remove_nodes_from([path, *old_ids])
            continue
        new_ids = {node_id(path, d.qualname) for d in facts.definitions}
        g.remove_nodes_from(old_ids - new_ids)
        g.add_node(
            path,
            kind="file",
            name=posixpath.basename(path),
            qualname="",
            path=path,
            start_line=1,
            end_line=facts.line_count,
            language=facts.language,
        )
        for d in facts.definitions:
            g.add_node(
                node_id(path, d.qualname),
                kind=d.kind,
                name=d.name,
                qualname=d.qualname,
                path=path,
                start_line=d.start_line,
                end_line=d.end_line,
                language=facts.language,
            )


def replace_edges(graph: RelationIndex, resolver: Resolver, paths: Iterable[str]) -> None:
    """Resolve ``paths`` again and replace the edges that start in them."""
    g = graph.graph
    for path in sorted(paths):
        fresh = resolver.file_edges(path)
        _swap_edges(g, graph.edges.get(path), fresh)
        graph.edges[path] = fresh
    for path in [p for p in graph.edges if p not in graph.facts]:
        del graph.edges[path]


def apply_changes(
    graph: RelationIndex,
    facts: Mapping[str, FileFacts | None],
    edges: Mapping[str, FileEdges | None],
) -> None:
    """Replace files' facts, nodes and edges with saved ones (None: the file is gone).

    A relation graph not built yet is left unbuilt: it is derived from the result later.
    """
    g = graph.graph if graph.has_relation_graph() else None
    if g is not None:
        replace_nodes(g, {p: graph.facts[p] for p in facts if p in graph.facts}, facts)
    for path, new in facts.items():
        if new is None:
            graph.facts.pop(path, None)
            graph.stats.pop(path, None)
        else:
            graph.facts[path] = new
    for path, file_edges in edges.items():
        old = graph.edges.pop(path, None)
        if file_edges is not None:
            graph.edges[path] = file_edges
        if g is not None:
            _swap_edges(g, old, file_edges)
    graph._resolver = None


def _swap_edges(g: nx.MultiDiGraph, old: FileEdges | None, new: FileEdges | None) -> None:
    """Remove one file's old edges from ``g`` and add its new ones."""
    if old is not None:
        for src, dst, rel in old.edges:
            if g.has_edge(src, dst, key=rel):
                g.remove_edge(src, dst, key=rel)
    if new is not None:
        for src, dst, rel in new.edges:
            if src in g and dst in g:
                g.add_edge(src, dst, key=rel, relation=rel)
