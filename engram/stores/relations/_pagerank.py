"""Rank files and symbols for a task with personalized PageRank over the relation index.

The walk follows reference edges (calls, imports, inherits, implements) in both directions,
forwards at full weight and backwards at ``reverse``; it restarts at the task's seeds: paths
it mentions or search found, symbols found, and identifiers of the query that name a
definition. Files and symbols close to the seeds and central in the project rank first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from engram.stores.relations._model import RelationIndex
from engram.stores.relations._power_iteration import pagerank

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass(frozen=True)
class RankWeights:
    """Named weights of the graph ranking."""

    calls: float = 1.0
    imports: float = 0.5
    inherits: float = 1.0
    implements: float = 1.0
    reverse: float = 0.5
    """Multiplier of an edge walked from target back to source."""
    seed_path: float = 1.0
    seed_symbol: float = 1.0
    query_identifier: float = 0.5
    """Seed weight of a query word that names a definition (split among its definitions)."""
    max_identifier_files: int = 3
    """A plain word naming definitions in more files than this is not a seed (too common)."""
    damping: float = 0.5
    """Probability of following an edge rather than restarting at a seed. Lower than the usual
    0.85: task ranking wants the seeds' near neighbourhood, not global centrality."""


DEFAULT_RANK_WEIGHTS = RankWeights()


def _file_of(node: str) -> str:
    return node.split("::", 1)[0]


def file_graph(
    relation_index: RelationIndex, weights: RankWeights = DEFAULT_RANK_WEIGHTS
) -> nx.DiGraph:
    """Collapse the relation index to files: one weighted edge per pair of related files."""
    g = nx.DiGraph()
    g.add_nodes_from(n for n, kind in relation_index.graph.nodes(data="kind") if kind == "file")
    for src, dst, rel in relation_index.graph.edges(keys=True):
        weight = getattr(weights, rel, 0.0) if rel != "contains" else 0.0
        a, b = _file_of(src), _file_of(dst)
        if weight <= 0 or a == b:
            continue
        for x, y, w in ((a, b, weight), (b, a, weight * weights.reverse)):
            previous = g.get_edge_data(x, y, {}).get("weight", 0.0)
            g.add_edge(x, y, weight=previous + w)
    return g


def _query_seeds(
    relation_index: RelationIndex, query: str, weights: RankWeights
) -> dict[str, float]:
    """Seed the definitions a query names, weighting rarer names more."""
    by_name: dict[str, list[str]] = {}
    words = set(IDENTIFIER.findall(query))
    if not words:
        return {}
    for node, name in relation_index.graph.nodes(data="name"):
        if name in words and "::" in node:
            by_name.setdefault(name, []).append(node)
    seeds: dict[str, float] = {}
    for name, nodes in by_name.items():
        files = {_file_of(n) for n in nodes}
        identifier_like = "_" in name.strip("_") or any(c.isupper() for c in name[1:])
        if not identifier_like and len(files) > weights.max_identifier_files:
            continue
        share = weights.query_identifier / len(nodes) / math.log2(1 + len(files))
        for node in nodes:
            seeds[node] = seeds.get(node, 0.0) + share
    return seeds


def _personalization(
    relation_index: RelationIndex,
    seed_symbols: Iterable[str],
    seed_paths: Iterable[str],
    query: str,
    weights: RankWeights,
) -> dict[str, float]:
    seeds: dict[str, float] = {}
    for path in seed_paths:
        if path in relation_index.graph:
            seeds[path] = seeds.get(path, 0.0) + weights.seed_path
    for symbol in seed_symbols:
        if symbol in relation_index.graph:
            seeds[symbol] = seeds.get(symbol, 0.0) + weights.seed_symbol
    for node, weight in _query_seeds(relation_index, query, weights).items():
        seeds[node] = seeds.get(node, 0.0) + weight
    return seeds


def _pagerank(g: nx.DiGraph, seeds: dict[str, float], damping: float) -> dict[str, float]:
    if g.number_of_nodes() == 0:
        return {}
    personalization = {n: w for n, w in seeds.items() if n in g and w > 0} or None
    return pagerank(g, alpha=damping, personalization=personalization)


def pagerank_files(
    relation_index: RelationIndex,
    *,
    seed_symbols: Iterable[str] = (),
    seed_paths: Iterable[str] = (),
    query: str = "",
    weights: RankWeights = DEFAULT_RANK_WEIGHTS,
    graph: nx.DiGraph | None = None,
) -> list[tuple[str, float]]:
    """Rank the project's files for a task, best first.

    Args:
        relation_index: The project's graph.
        seed_symbols: Node ids of symbols known to matter (search hits, mentioned symbols).
        seed_paths: Files known to matter (mentioned paths, search hits), best first.
        query: The task text; its identifiers that name definitions become seeds.
        weights: Named weights.
        graph: A precomputed ``file_graph`` to reuse across calls.

    Returns:
        (path, score) pairs; with no seed at all, plain PageRank (global importance).
    """
    g = graph if graph is not None else file_graph(relation_index, weights)
    seeds: dict[str, float] = {}
    for node, weight in _personalization(
        relation_index, seed_symbols, seed_paths, query, weights
    ).items():
        seeds[_file_of(node)] = seeds.get(_file_of(node), 0.0) + weight
    scores = _pagerank(g, seeds, weights.damping)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def rank_symbols(
    relation_index: RelationIndex,
    *,
    seed_symbols: Iterable[str] = (),
    seed_paths: Iterable[str] = (),
    query: str = "",
    weights: RankWeights = DEFAULT_RANK_WEIGHTS,
    limit: int = 50,
) -> list[tuple[str, float]]:
    """Rank definitions (not files) for a task, best first, at most ``limit`` of them."""
    g = nx.DiGraph()
    for src, dst, rel in relation_index.graph.edges(keys=True):
        weight = getattr(weights, rel, 0.0) if rel != "contains" else 0.0
        if weight <= 0 or src == dst:
            continue
        for x, y, w in ((src, dst, weight), (dst, src, weight * weights.reverse)):
            previous = g.get_edge_data(x, y, {}).get("weight", 0.0)
            g.add_edge(x, y, weight=previous + w)
    seeds = _personalization(relation_index, seed_symbols, (), query, weights)
    for path in seed_paths:
        # A seeded file spreads its weight over the definitions it contains.
        children = (
            [c for _, c, r in relation_index.graph.out_edges(path, keys=True) if r == "contains"]
            if path in relation_index.graph
            else []
        )
        for child in children:
            seeds[child] = seeds.get(child, 0.0) + weights.seed_path / len(children)
    scores = _pagerank(g, seeds, weights.damping)
    ranked = sorted(((n, s) for n, s in scores.items() if "::" in n), key=lambda p: (-p[1], p[0]))
    return ranked[:limit]
