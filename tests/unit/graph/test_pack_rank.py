"""Evidence fusion for the pack: file ranking, code map, round-robin slices, history."""

from __future__ import annotations

import random

from engram.graph.pack._code_slices import slice_items
from engram.graph.pack._fusion import (
    Evidence,
    code_map_items,
    evidence_of,
    rank_files,
)
from engram.graph.pack._text_items import history_items, text_items


def words(text: str) -> int:
    return len(text.split())


def hit(path, start, end, score, source, symbol=""):
    return {
        "path": path,
        "start_line": start,
        "end_line": end,
        "symbol": symbol,
        "kind": "function",
        "score": score,
        "source": source,
    }


HITS = [
    hit("a.py", 1, 10, 0.9, "exact", "a"),
    hit("b.py", 5, 9, 0.8, "exact", "b"),
    hit("b.py", 20, 30, 0.9, "bm25", "b2"),
    hit("c.py", 1, 4, 0.7, "bm25", "c"),
    hit("c.py", 1, 4, 0.99, "dense", "c"),
    hit("d.py", 1, 3, 0.5, "dense", "d"),
]


def test_files_found_by_more_sources_rank_higher():
    ranked = rank_files(evidence_of(HITS, [], []))
    paths = [r.path for r in ranked]
    assert set(paths[:2]) == {"b.py", "c.py"}
    assert paths[-1] in {"a.py", "d.py"}
    b = next(r for r in ranked if r.path == "b.py")
    assert [s.symbol for s in b.spans] == ["b2", "b"]  # rank 1 in bm25 beats rank 2 in exact
    assert any(reason.startswith("exact #") for reason in b.reasons)


def test_ranking_ignores_input_order():
    shuffled = list(HITS)
    random.Random(1).shuffle(shuffled)
    assert rank_files(evidence_of(HITS, [], [])) == rank_files(evidence_of(shuffled, [], []))


def test_a_leading_source_keeps_its_file_order_ahead_of_the_fusion():
    # the localizer ranks e.py (no other source has it), then a.py; RRF puts a.py first
    localized = [hit("e.py", 1, 3, 1.0, "localizer", "e"), hit("a.py", 1, 10, 0.5, "localizer")]
    evidence = evidence_of([*HITS, *localized], [], [])
    fused = [r.path for r in rank_files(evidence)]
    assert fused[:2] == ["a.py", "e.py"]
    led = [r.path for r in rank_files(evidence, lead="localizer")]
    assert led[:2] == ["e.py", "a.py"]
    assert led[2:] == [p for p in fused if p not in {"e.py", "a.py"}]  # the rest: fusion order
    assert [r.path for r in rank_files(evidence, lead="absent")] == fused
    # The scores follow the order: the map never lists a file above one with a higher score.
    scores = [r.score for r in rank_files(evidence, lead="localizer")]
    assert scores == sorted(scores, reverse=True)  # ties, if any, by path
    items = code_map_items(rank_files(evidence, lead="localizer"))
    assert [item.score for item in items] == sorted((item.score for item in items), reverse=True)


def test_graph_and_phase0_evidence_are_fused():
    related = [
        {
            "path": "e.py",
            "start_line": 2,
            "end_line": 8,
            "symbol": "E.run",
            "relation": "calls",
            "score": 0.4,
        }
    ]
    ranked = rank_files(evidence_of(HITS, related, ["f.py"]))
    by_path = {r.path: r for r in ranked}
    assert "e.py" in by_path and "f.py" in by_path
    assert by_path["e.py"].reasons == ("graph #1: E.run (calls)",)
    assert by_path["f.py"].spans == ()
    assert by_path["f.py"].score > by_path["e.py"].score  # graph counts half


def test_code_map_lists_why():
    items = code_map_items(rank_files(evidence_of(HITS, [], [])))
    assert items[0].section == "code_map"
    assert "why:" in items[0].text and items[0].reasons


def test_code_map_names_what_a_file_defines_not_the_file_itself():
    hits = [
        hit("pkg/mod.py", 1, 5, 0.9, "bm25", "pkg/mod.py"),
        hit("pkg/mod.py", 6, 9, 0.8, "bm25", "mod.py"),
        hit("pkg/mod.py", 10, 20, 0.7, "bm25", "Parser.parse(self, text)"),
    ]
    (item,) = code_map_items(rank_files(evidence_of(hits, [], [])))
    assert item.text == "1. pkg/mod.py — Parser.parse (why: bm25 #1)"


def test_code_map_is_limited_to_its_file_count():
    many = [hit(f"f{i}.py", 1, 2, 1 - i / 100, "bm25", f"f{i}") for i in range(30)]
    assert len(code_map_items(rank_files(evidence_of(many, [], [])), limit=20)) == 20


def test_slices_deal_best_span_of_every_file_first_and_never_repeat_a_line():
    files = {
        "a.py": [f"a line {i}" for i in range(40)],
        "b.py": [f"b line {i}" for i in range(40)],
        "c.py": [f"c line {i}" for i in range(40)],
    }
    hits = HITS + [hit("b.py", 20, 30, 0.1, "dense", "b2"), hit("b.py", 25, 34, 0.05, "bm25")]
    ranked = rank_files(evidence_of(hits, [], []))
    items = slice_items(ranked, files.get, words, focus=0)
    firsts = [i.path for i in items[: len({i.path for i in items})]]
    assert len(set(firsts)) == len(firsts)  # round 1 has one slice per file
    b_spans = [(i.start_line, i.end_line) for i in items if i.path == "b.py"]
    assert b_spans.count((20, 30)) == 1  # the same span from another source is not repeated
    assert (31, 34) in b_spans  # an overlapping span shows only the lines not shown yet
    assert all(i.path != "d.py" for i in items)  # unreadable file skipped


def test_long_span_keeps_its_head_within_the_slice_limit():
    lines = [f"word{i} " * 5 for i in range(500)]
    ranked = rank_files([Evidence("big.py", 1, 500, "Big", 1.0, "bm25")])
    (only,) = slice_items(ranked, {"big.py": lines}.get, words, max_tokens=100, focus=0)
    assert words(only.text) <= 100
    assert only.start_line == 1 and only.end_line < 500
    assert "more lines" in only.text


def test_leading_files_give_all_their_spans_first_and_longer():
    files = {p: [f"{p} word{i} " * 3 for i in range(200)] for p in ("a.py", "b.py", "c.py")}
    hits = [
        hit("a.py", 1, 100, 0.9, "bm25", "a1"),
        hit("a.py", 120, 130, 0.8, "bm25", "a2"),
        hit("b.py", 1, 5, 0.5, "bm25", "b1"),
        hit("c.py", 1, 5, 0.4, "bm25", "c1"),
        hit("c.py", 10, 15, 0.3, "bm25", "c2"),
    ]
    ranked = rank_files(evidence_of(hits, [], []))
    items = slice_items(ranked, files.get, words, focus=1, focus_tokens=200, max_tokens=50)
    assert [i.path for i in items] == ["a.py", "a.py", "c.py", "b.py", "c.py"]  # then round-robin
    assert words(items[0].text) > 50 >= words(items[2].text)  # the leading file's slice is longer


def test_file_without_span_contributes_its_head():
    ranked = rank_files(evidence_of([], [], ["f.py"]))
    (only,) = slice_items(ranked, {"f.py": ["x = 1", "y = 2"]}.get, words)
    assert (only.start_line, only.end_line) == (1, 2)


def test_text_items_split_paragraphs_and_carry_labels():
    items = text_items("rules", "## ENGRAM.md\nUse tabs.\n\nNo globals.\n\n## AGENTS.md\nBe brief.")
    assert [i.path for i in items] == ["ENGRAM.md", "ENGRAM.md", "AGENTS.md"]


def test_history_picks_overlapping_exchanges_in_order():
    exchanges = [
        ("fix the parser crash", "patched parser.py"),
        ("what is the weather", "no idea"),
        ("parser tests fail", "the parser crash came back"),
    ]
    items = history_items(exchanges, "parser crash again", limit=2)
    assert [i.text.split("\n")[0] for i in items] == [
        "User: fix the parser crash",
        "User: parser tests fail",
    ]


def test_documentation_ranks_below_code_it_ties_with():
    hits = [hit("docs/guide.md", 1, 5, 0.9, "bm25", "guide"), hit("src/x.py", 1, 5, 0.9, "dense")]
    ranked = rank_files(evidence_of(hits, [], []))
    assert [r.path for r in ranked] == ["src/x.py", "docs/guide.md"]


def test_multiline_symbols_become_one_line_and_a_header_names_no_signature():
    hits = [hit("a.py", 1, 3, 1.0, "bm25", "f(a,\n    b)")]
    lines = ["def f(a,", "      b):", "    return a"]
    (only,) = slice_items(rank_files(evidence_of(hits, [], [])), {"a.py": lines}.get, words)
    # the signature is the slice's own first lines: the header gives the name only
    assert only.symbol == "f(a, b)"
    assert only.text.splitlines() == ["--- a.py:1-3 f", *lines]


def test_tests_rank_below_code_they_tie_with_unless_the_task_is_about_tests():
    hits = [hit("tests/test_x.py", 1, 5, 0.9, "bm25", "t"), hit("src/x.py", 1, 5, 0.9, "dense")]
    evidence = evidence_of(hits, [], [])
    assert [r.path for r in rank_files(evidence, demote_tests=True)] == [
        "src/x.py",
        "tests/test_x.py",
    ]
    plain = {r.path: r.score for r in rank_files(evidence, demote_tests=False)}
    demoted = {r.path: r.score for r in rank_files(evidence, demote_tests=True)}
    assert demoted["tests/test_x.py"] == plain["tests/test_x.py"] / 2
    assert demoted["src/x.py"] == plain["src/x.py"]


def test_depth_beyond_its_share_waits_for_other_files_best_spans():
    files = {p: [f"{p} word{i} " * 3 for i in range(200)] for p in ("a.py", "b.py")}
    hits = [
        hit("a.py", 1, 10, 0.9, "bm25", "a1"),
        hit("a.py", 20, 30, 0.8, "bm25", "a2"),
        hit("a.py", 40, 50, 0.7, "bm25", "a3"),
        hit("b.py", 1, 5, 0.5, "bm25", "b1"),
    ]
    ranked = rank_files(evidence_of(hits, [], []))
    one_span = words(slice_items(ranked, files.get, words, focus=1)[1].text)
    items = slice_items(ranked, files.get, words, focus=1, depth_tokens=one_span)
    assert [(i.path, i.start_line) for i in items] == [
        ("a.py", 1),
        ("a.py", 20),
        ("b.py", 1),
        ("a.py", 40),
    ]


def test_leading_files_take_their_spans_in_the_localizers_order():
    localizer = [
        hit("a.py", 50, 60, 1.0, "localizer", "named_in_issue"),
        hit("a.py", 1, 10, 0.99, "localizer", "head"),
        hit("b.py", 50, 60, 0.5, "localizer", "b_named"),
        hit("b.py", 1, 10, 0.49, "localizer", "b_head"),
        hit("c.py", 50, 60, 0.33, "localizer", "c_named"),
        hit("c.py", 1, 10, 0.32, "localizer", "c_head"),
    ]
    bm25 = [hit(p, 1, 10, 0.9, "bm25", "text match") for p in ("a.py", "b.py", "c.py")]
    ranked = rank_files(evidence_of([*localizer, *bm25], [], []), lead="localizer")
    assert [r.path for r in ranked] == ["a.py", "b.py", "c.py"]
    assert [s.symbol for s in ranked[0].spans] == ["named_in_issue", "head"]
    assert [s.symbol for s in ranked[1].spans] == ["b_named", "b_head"]
    # past the leading files, a span's best rank in any source orders it (bm25 ranks c's
    # head first there)
    assert [s.start_line for s in ranked[2].spans] == [1, 50]


def test_a_line_too_long_for_its_slice_is_cut_not_the_slice_dropped():
    data = "TABLE = [" + "1, " * 50_000 + "]"
    lines = ["def table():", f"    return {data}", "", data]
    ranked = rank_files(
        [
            Evidence("gen.py", 1, 2, "table()", 1.0, "bm25"),
            Evidence("gen.py", 4, 4, "TABLE", 0.9, "bm25"),
        ]
    )
    items = slice_items(ranked, {"gen.py": lines}.get, words, max_tokens=100, focus=0)
    assert [(i.start_line, i.end_line) for i in items] == [(1, 2), (4, 4)]
    function, constant = (i.text.splitlines() for i in items)
    assert function[1] == "def table():"  # the signature, then the body's start, cut
    assert function[2].startswith("    return TABLE = [1, 1, ")
    assert function[2].endswith("more characters)")
    assert constant[1].startswith("TABLE = [1, 1, ")
    assert all(words(i.text) <= 100 for i in items)
