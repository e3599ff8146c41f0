"""Ordering a localized file's chunks by what the issue points at."""

from engram.stores.codeindex import Located
from engram.stores.codeindex._chunk_pointing import TextRanks, point_chunks

CHUNKS = [
    Located("a.py", 1, 4, "", "file", "head"),
    Located("a.py", 5, 20, "Parser", "class", "cls"),
    Located("a.py", 6, 9, "Parser.parse(self)", "method", "parse"),
    Located("a.py", 10, 20, "Parser.emit(self)", "method", "emit"),
    Located("a.py", 22, 30, "helper()", "function", "helper"),
]
NO_RANKS = TextRanks(text={}, title={})


def keys(chunks):
    return [c.key for c in chunks]


def test_frame_names_and_text_order_the_chunks():
    ranks = TextRanks(text={"helper": 1, "head": 40}, title={})
    picked = point_chunks(CHUNKS, [12], ["parse"], ranks, limit=10, fill=False)
    # helper: 20/6 = 3.33 (text #1); emit: the innermost chunk around frame line 12 (3.0);
    # parse: defines a named name (2.0); head: text #40 (0.44); the class is not pointed at
    assert keys(picked) == ["helper", "emit", "parse", "head"]


def test_title_matches_count_half_of_text_matches():
    ranks = TextRanks(text={"emit": 3}, title={"helper": 3})
    assert keys(point_chunks(CHUNKS, [], [], ranks, limit=2, fill=False)) == ["emit", "helper"]


def test_fill_adds_the_rest_in_file_order_up_to_the_limit():
    ranks = TextRanks(text={"helper": 2}, title={})
    assert keys(point_chunks(CHUNKS, [], [], ranks, limit=3, fill=True)) == [
        "helper",
        "head",
        "cls",
    ]
    assert point_chunks(CHUNKS, [], [], NO_RANKS, limit=3, fill=False) == []


def test_a_frame_on_module_code_points_at_no_chunk():
    assert point_chunks(CHUNKS, [2], [], NO_RANKS, limit=5, fill=False) == []


def test_functions_similar_past_fixes_changed_are_pointed_at():
    ranks = TextRanks(text={"helper": 100, "parse": 100}, title={})  # 20 / 105 = 0.19 each
    changed = {"emit": 1.0, "parse": 0.5, "missing": 1.0}
    picked = point_chunks(CHUNKS, [], [], ranks, limit=10, fill=False, changed=changed)
    # emit: the best past fix changed it (0.5); parse: text #100 and a weaker fix (0.19 + 0.25)
    assert keys(picked) == ["emit", "parse", "helper"]
    # a tie-breaker: a name the issue mentions still comes first
    named = point_chunks(CHUNKS, [], ["helper"], ranks, limit=10, fill=False, changed=changed)
    assert keys(named)[0] == "helper"
    assert keys(point_chunks(CHUNKS, [], [], ranks, limit=10, fill=False)) == ["parse", "helper"]
