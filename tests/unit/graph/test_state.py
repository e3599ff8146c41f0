from __future__ import annotations

from engram.graph._state import add_usage, any_true, append_log, append_unique, merge_by_key


def test_append_unique_keeps_order_and_drops_repeats():
    assert append_unique(["a", "b"], ["b", "c", "a", "d"]) == ["a", "b", "c", "d"]
    assert append_unique(None, "x") == ["x"]
    assert append_unique(["x"], None) == ["x"]


def test_append_log_copies_entries():
    left = [{"tier": 1}]
    out = append_log(left, [{"tier": 2}])
    assert out == [{"tier": 1}, {"tier": 2}]
    out[0]["tier"] = 9
    assert left[0]["tier"] == 1


def test_add_usage_sums_all_keys():
    total = add_usage(
        {"input": 10, "output": 2, "cache_read": 4, "calls": 1},
        {"input": 5, "output": 1, "cache_read": 0, "calls": 1, "extra": 3},
    )
    assert total == {"input": 15, "output": 3, "cache_read": 4, "calls": 2, "extra": 3}
    assert add_usage(None, None) == {"input": 0, "output": 0, "cache_read": 0, "calls": 0}


def test_any_true_latches():
    assert any_true(False, True) is True
    assert any_true(True, False) is True
    assert any_true(None, None) is False


def test_merge_by_key_keeps_best_score_and_none_clears():
    a = {"path": "a.py", "start_line": 1, "end_line": 5, "symbol": "f", "score": 0.2}
    a_better = dict(a, score=0.9, source="bm25")
    b = {"key": "b", "score": 0.5}
    merged = merge_by_key([a, b], [a_better])
    assert len(merged) == 2
    assert {m.get("source") for m in merged} == {"bm25", None}
    assert merge_by_key([a], [dict(a, score=0.1)])[0]["score"] == 0.2
    assert merge_by_key([a, b], None) == []
