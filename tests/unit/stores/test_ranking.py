"""Reciprocal rank fusion and file aggregation math."""

from __future__ import annotations

import pytest

from engram.stores.codeindex import RRF_K, aggregate_files, rrf


def test_rrf_sums_reciprocal_ranks():
    fused = dict(rrf({"bm25": ["a", "b"], "dense": ["b", "c"]}, {}))
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused["c"] == pytest.approx(1 / (RRF_K + 2))


def test_rrf_orders_best_first_and_keeps_first_seen_order_on_ties():
    fused = rrf({"x": ["a", "b"], "y": ["b", "a"]}, {})
    assert [i for i, _ in fused] == ["a", "b"]
    assert fused[0][1] == pytest.approx(fused[1][1])
    assert [i for i, _ in rrf({"x": ["a", "b", "c"], "y": ["c"]}, {})][0] == "c"


def test_rrf_weights_scale_lists_and_zero_drops_one():
    fused = dict(rrf({"exact": ["a"], "dense": ["b"]}, {"exact": 2.0, "dense": 0.5}))
    assert fused["a"] == pytest.approx(2.0 / (RRF_K + 1))
    assert fused["b"] == pytest.approx(0.5 / (RRF_K + 1))
    assert "b" not in dict(rrf({"exact": ["a"], "dense": ["b"]}, {"dense": 0.0}))


def test_rrf_accepts_extra_named_lists_with_default_weight():
    fused = dict(rrf({"bm25": ["a"], "graph": ["a", "z"]}, {"bm25": 1.0}))
    assert fused["a"] == pytest.approx(2 / (RRF_K + 1))
    assert fused["z"] == pytest.approx(1 / (RRF_K + 2))


def test_rrf_counts_repeats_in_one_list_once_and_k_changes_spread():
    assert dict(rrf({"x": ["a", "a"]}, {}))["a"] == pytest.approx(1 / (RRF_K + 1))
    assert dict(rrf({"x": ["a"]}, {}, k=0))["a"] == pytest.approx(1.0)
    assert rrf({}, {}) == []


def test_aggregate_files_decays_runner_up_chunks():
    ranked = aggregate_files(
        [("a.py", 1.0), ("b.py", 0.9), ("a.py", 0.2), ("b.py", 0.8), ("b.py", 0.1)],
        decay=0.5,
        top_chunks=2,
    )
    assert ranked == [("b.py", pytest.approx(0.9 + 0.4)), ("a.py", pytest.approx(1.1))]


def test_aggregate_files_breaks_ties_by_path_and_zero_decay_keeps_best():
    assert aggregate_files([("b", 1.0), ("a", 1.0)]) == [("a", 1.0), ("b", 1.0)]
    assert aggregate_files([("a", 1.0), ("a", 0.9)], decay=0.0) == [("a", 1.0)]
