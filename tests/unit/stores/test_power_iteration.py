"""The NumPy PageRank gives networkx's scores (networkx's own runs on SciPy, a dev dependency)."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from engram.stores.relations._power_iteration import pagerank

pytest.importorskip("scipy")


def _random_graph(seed: int, nodes: int, edges: int) -> nx.DiGraph:
    rng = random.Random(seed)
    g = nx.DiGraph()
    g.add_nodes_from(f"n{i}" for i in range(nodes))  # some stay isolated: dangling nodes
    for _ in range(edges):
        u, v = rng.randrange(nodes), rng.randrange(nodes)
        g.add_edge(f"n{u}", f"n{v}", weight=rng.choice([0.25, 0.5, 1.0, 2.0]))
    return g


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("personalized", [False, True])
def test_scores_match_networkx(seed: int, personalized: bool) -> None:
    g = _random_graph(seed, nodes=60, edges=150)
    seeds = {"n1": 2.0, "n7": 0.5, "n30": 1.0} if personalized else None
    expected = nx.pagerank(g, alpha=0.85, personalization=seeds, weight="weight")
    got = pagerank(g, alpha=0.85, personalization=seeds)
    assert list(got) == list(expected)
    assert got == pytest.approx(expected, abs=1e-12)
    assert sum(got.values()) == pytest.approx(1.0)


def test_edges_without_weight_and_self_loops() -> None:
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "c")])
    assert pagerank(g, alpha=0.5, personalization={"a": 1.0}) == pytest.approx(
        nx.pagerank(g, alpha=0.5, personalization={"a": 1.0})
    )


def test_empty_graph_and_seeds_outside_it() -> None:
    assert pagerank(nx.DiGraph(), alpha=0.85, personalization=None) == {}
    g = nx.DiGraph([("a", "b")])
    uniform = pagerank(g, alpha=0.85, personalization=None)
    assert pagerank(g, alpha=0.85, personalization={"zzz": 1.0}) == uniform
