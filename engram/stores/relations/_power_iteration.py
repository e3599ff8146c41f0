"""Personalized PageRank by power iteration over edge arrays, in NumPy.

It computes what ``networkx.pagerank`` computes (the same teleport, the same handling of
dangling nodes, the same stopping rule), without the sparse matrices networkx builds with SciPy:
SciPy is 136 MB of an install that needs nothing else from it. Each step spreads every node's
score over its out-edges with one ``np.bincount``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

MAX_ITERATIONS = 100
"""Steps before the walk gives up converging and answers with its last scores (networkx's)."""

TOLERANCE = 1e-6
"""Convergence: the scores' L1 change per node falls below this (networkx's ``tol``)."""


def pagerank(
    g: nx.DiGraph, *, alpha: float, personalization: dict[str, float] | None
) -> dict[str, float]:
    """Return each node's PageRank in ``g`` with edge attribute ``weight``, summing to 1.

    Args:
        g: The graph; an edge without a ``weight`` weighs 1.
        alpha: The damping factor (the chance to follow an edge rather than restart).
        personalization: Restart weights by node (normalised here); ``None`` restarts uniformly.

    Returns:
        Scores by node, in the graph's node order; empty for an empty graph.
    """
    nodes = list(g)
    count = len(nodes)
    if count == 0:
        return {}
    position = {node: i for i, node in enumerate(nodes)}
    edges = [(position[u], position[v], w) for u, v, w in g.edges(data="weight", default=1.0)]
    sources = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
    targets = np.fromiter((e[1] for e in edges), dtype=np.int64, count=len(edges))
    weights = np.fromiter((e[2] for e in edges), dtype=float, count=len(edges))
    out_weight = np.bincount(sources, weights=weights, minlength=count)
    dangling = out_weight == 0
    # Each edge carries its share of the source's out-weight.
    shares = weights / np.where(dangling, 1.0, out_weight)[sources]
    restart = _restart_vector(nodes, personalization)
    scores = np.full(count, 1.0 / count)
    for _ in range(MAX_ITERATIONS):
        previous = scores
        spread = np.bincount(targets, weights=previous[sources] * shares, minlength=count)
        scores = alpha * (spread + previous[dangling].sum() * restart) + (1 - alpha) * restart
        if np.abs(scores - previous).sum() < count * TOLERANCE:
            break
    return dict(zip(nodes, scores.tolist(), strict=True))


def _restart_vector(nodes: list[str], personalization: dict[str, float] | None) -> np.ndarray:
    """Restart probabilities by node: the personalization normalised, or uniform without one."""
    if not personalization:
        return np.full(len(nodes), 1.0 / len(nodes))
    weights = np.array([personalization.get(node, 0.0) for node in nodes], dtype=float)
    total = weights.sum()
    if total <= 0:
        return np.full(len(nodes), 1.0 / len(nodes))
    return weights / total
