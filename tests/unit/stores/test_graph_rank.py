"""Personalized PageRank ranking of files and symbols."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.stores.relations import RelationIndex
from engram.stores.relations._index import build_relation_index
from engram.stores.relations._pagerank import RankWeights, pagerank_files, rank_symbols

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "graph"


@pytest.fixture(scope="module")
def graph() -> RelationIndex:
    g = RelationIndex()
    build_relation_index(FIXTURES / "python", g)
    return g


def position(ranked, item):
    return [p for p, _ in ranked].index(item)


def test_ranks_every_file_and_scores_sum_to_one(graph):
    ranked = pagerank_files(graph)
    assert {p for p, _ in ranked} == {n for n, k in graph.graph.nodes(data="kind") if k == "file"}
    assert sum(s for _, s in ranked) == pytest.approx(1.0)


def test_seed_path_pulls_its_neighbourhood_up(graph):
    plain = pagerank_files(graph)
    seeded = pagerank_files(graph, seed_paths=["shop/util.py"])
    assert position(seeded, "shop/util.py") == 0
    assert position(seeded, "shop/service.py") == 1  # util.py's only neighbour
    assert position(plain, "shop/util.py") > 0


def test_query_identifiers_seed_their_definitions(graph):
    ranked = pagerank_files(graph, query="fmt_line drops the prefix")
    assert ranked[0][0] == "shop/util.py"
    common = pagerank_files(graph, query="the and of")
    assert common == pagerank_files(graph)


def test_weights_are_named_and_change_the_result(graph):
    no_imports = RankWeights(imports=0.0, calls=0.0, inherits=0.0, implements=0.0)
    ranked = pagerank_files(graph, seed_paths=["shop/util.py"], weights=no_imports)
    others = [s for p, s in ranked if p != "shop/util.py"]
    assert max(others) < ranked[0][1]
    assert len(set(round(s, 9) for s in others)) == 1  # no edges: only teleports differ


def test_rank_symbols_prefers_seeded_symbols(graph):
    ranked = rank_symbols(graph, seed_symbols=["shop/repo.py::SqlRepository._connect"], limit=5)
    assert len(ranked) == 5
    assert ranked[0][0] == "shop/repo.py::SqlRepository._connect"
    assert all("::" in node for node, _ in ranked)
