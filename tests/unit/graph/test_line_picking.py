"""Cut spans: the head, then the lines that name the task's rarest terms."""

from __future__ import annotations

from engram.graph.pack._code_slices import MIN_RECUT_TOKENS, slice_items
from engram.graph.pack._fusion import Evidence, evidence_of, rank_files
from engram.graph.pack._line_picking import (
    frame_lines,
    head_rows,
    line_terms,
    pick_rows,
    title_terms,
)


def words(text: str) -> int:
    return len(text.split())


def long_function(size: int = 300, needle_at: int = 250) -> list[str]:
    lines = ["def handle(request):", '    """Handle one request."""']
    lines += [f"    step_{i} = compute(request, {i})" for i in range(size - 2)]
    lines[needle_at] = "    if request.timeout_retry_budget is None:"
    return lines


def test_task_terms_drop_numbers_and_short_words():
    assert line_terms("Fix timeout_retry_budget in 2 of os paths") == {
        "fix",
        "timeout_retry_budget",
        "timeout",
        "retry",
        "budget",
        "paths",
    }


def test_head_rows_keep_the_first_row_even_when_it_is_too_long():
    assert head_rows([50, 1, 1], 10) == {0}
    assert head_rows([3, 3, 3, 3], 7) == {0, 1}


def test_pick_rows_show_the_head_and_a_window_around_the_rare_term():
    lines = long_function()
    costs = [words(line) + 1 for line in lines]
    rows = pick_rows(lines, costs, 120, line_terms("timeout retry budget is ignored"), 4)
    assert {0, 1} <= rows  # the signature and docstring
    assert set(range(248, 255)) <= rows  # two lines before the needle, four after
    assert sum(costs[r] for r in rows) <= 120


def test_a_term_on_every_line_points_nowhere():
    lines = long_function()
    costs = [words(line) + 1 for line in lines]
    common = pick_rows(lines, costs, 120, line_terms("compute request"), 4)
    rare = pick_rows(lines, costs, 120, line_terms("compute request timeout"), 4)
    assert 250 not in common and 250 in rare


def test_a_long_slice_shows_the_lines_the_task_names_and_says_what_it_left_out():
    lines = long_function()
    ranked = rank_files([Evidence("svc.py", 1, 300, "handle", 1.0, "bm25")])
    (only,) = slice_items(
        ranked,
        {"svc.py": lines}.get,
        words,
        max_tokens=200,
        focus=0,
        terms=line_terms("the timeout retry budget is ignored"),
    )
    assert words(only.text) <= 200
    assert "timeout_retry_budget" in only.text
    assert len(only.shown) == 2 and only.shown[0][0] == 1 and only.shown[1][0] <= 251
    assert only.shown[1][1] >= 251 and only.end_line == only.shown[-1][1]
    gap = only.shown[1][0] - only.shown[0][1] - 1
    assert f"… {gap} lines" in only.text and "more lines" in only.text
    assert only.to_dict()["shown"] == [list(run) for run in only.shown]


def test_without_terms_a_long_slice_keeps_its_head():
    ranked = rank_files([Evidence("svc.py", 1, 300, "handle", 1.0, "bm25")])
    (only,) = slice_items(ranked, {"svc.py": long_function()}.get, words, max_tokens=200, focus=0)
    assert only.shown == () and only.start_line == 1 and "timeout" not in only.text
    assert "shown" not in only.to_dict()


def test_the_span_that_overflows_the_depth_share_is_cut_to_the_room_left():
    files = {"a.py": ["x = 1"] * 20 + long_function(), "b.py": ["y = 2"] * 10}
    hits = [
        {
            "path": "a.py",
            "start_line": 1,
            "end_line": 5,
            "symbol": "top",
            "kind": "function",
            "score": 0.9,
            "source": "bm25",
        },
        {
            "path": "a.py",
            "start_line": 21,
            "end_line": 320,
            "symbol": "handle",
            "kind": "function",
            "score": 0.8,
            "source": "bm25",
        },
        {
            "path": "b.py",
            "start_line": 1,
            "end_line": 5,
            "symbol": "b",
            "kind": "function",
            "score": 0.5,
            "source": "bm25",
        },
    ]
    ranked = rank_files(evidence_of(hits, [], []))
    room = MIN_RECUT_TOKENS + 100
    items = slice_items(
        ranked,
        files.get,
        words,
        focus=1,
        depth_tokens=room,
        terms=line_terms("timeout retry budget"),
    )
    assert [(i.path, i.start_line) for i in items] == [("a.py", 1), ("a.py", 21), ("b.py", 1)]
    assert words(items[1].text) <= room and "timeout_retry_budget" in items[1].text
    small = slice_items(ranked, files.get, words, focus=1, depth_tokens=MIN_RECUT_TOKENS - 1)
    assert [(i.path, i.start_line) for i in small] == [("a.py", 1), ("b.py", 1), ("a.py", 21)]


def test_a_one_line_gap_shows_its_line_when_that_costs_no_more_than_the_marker():
    lines = ["def f(x):"] + [f"    v{i} = x" for i in range(60)]
    lines[30], lines[38] = "    if needle:", "    needle += 1"
    costs = [3] * len(lines)
    costs[34] = costs[35] = 1  # row 35 is the one line between the two needles' windows
    rows = pick_rows(lines, costs, 59, line_terms("needle"), 2)
    assert set(range(28, 43)) <= rows and 5 not in rows


def module_with_functions() -> list[str]:
    """A module: imports, a 40-line function, a 40-line function, then module-level code."""
    lines = ["import os", "LIMIT = 3", ""]
    for name in ("parse", "render"):
        lines += [f"def {name}(text):", f'    """{name.title()} the text."""']
        lines += [f"    {name}_step_{i} = os.path.join(text, '{i}')" for i in range(38)]
        lines.append("")
    lines += ["if __name__ == '__main__':", "    parse(os.getcwd())"]
    return lines


def test_a_module_chunk_leaves_out_the_functions_it_encloses():
    lines = module_with_functions()
    spans = [
        Evidence("m.py", 1, len(lines), "m.py", 1.0, "localizer"),  # module code around them
        Evidence("m.py", 4, 43, "parse(text)", 0.9, "localizer"),
        Evidence("m.py", 44, 83, "render(text)", 0.8, "localizer"),
    ]
    items = slice_items(rank_files(spans), {"m.py": lines}.get, words, focus_tokens=4000)
    module, parse, render = items
    shown = {n for a, b in module.shown for n in range(a, b + 1)}
    assert {1, 2, 84, 85} <= shown and not shown & set(range(4, 84))
    assert (parse.start_line, parse.end_line) == (4, 43)
    assert (render.start_line, render.end_line) == (44, 83)


def test_a_cut_slice_shows_the_line_a_traceback_frame_points_at():
    lines = long_function()
    task = (
        "Crash in handle\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/app/svc.py", line 201, in handle\n'
        "    step = compute(request)\n"
        "ValueError: bad step\n"
    )
    assert frame_lines(task, ["app/svc.py", "other.py"]) == {"app/svc.py": frozenset({201})}
    ranked = rank_files([Evidence("app/svc.py", 1, 300, "handle", 1.0, "bm25")])
    (only,) = slice_items(
        ranked,
        {"app/svc.py": lines}.get,
        words,
        max_tokens=150,
        focus=0,
        terms=line_terms(task),
        anchors=frame_lines(task, ["app/svc.py"]),
    )
    assert any(a <= 201 <= b for a, b in only.shown)
    assert only.shown[0][0] == 1  # the head still comes first
    assert words(only.text) <= 150


def test_an_issue_naming_a_function_gets_its_body_sliced_whole():
    lines = module_with_functions()
    ranked = rank_files(
        [
            Evidence("m.py", 44, 83, "render(text)", 1.0, "localizer"),
            Evidence("m.py", 4, 43, "parse(text)", 0.5, "localizer"),
        ]
    )
    first, _ = slice_items(ranked, {"m.py": lines}.get, words, terms=line_terms("render fails"))
    assert (first.symbol, first.start_line, first.end_line, first.shown) == (
        "render(text)",
        44,
        83,
        (),
    )


def test_the_leading_file_is_scanned_for_the_task_terms_after_its_best_span():
    lines = module_with_functions()
    lines[70] = "    if render_cache_limit > LIMIT:"  # in render, far from parse
    other = ["def helper():", "    return render_cache_limit"] + ["    pass"] * 200
    ranked = rank_files(
        [
            Evidence("m.py", 4, 43, "parse(text)", 1.0, "localizer"),
            Evidence("other.py", 1, 202, "helper()", 0.5, "localizer"),
        ]
    )
    terms = line_terms("render_cache_limit is ignored")
    files = {"m.py": lines, "other.py": other}
    # the leading files' best spans come first, then the scan (in the depth share)
    best, helper, scan = slice_items(ranked, files.get, words, focus=2, terms=terms, scan_tokens=80)
    assert (best.path, best.start_line, best.end_line) == ("m.py", 4, 43) and not best.shown
    # the scan: the file's head, then the line naming the task's rare term, none of parse
    assert scan.path == "m.py" and words(scan.text) <= 80
    shown = {n for a, b in scan.shown for n in range(a, b + 1)}
    assert {1, 2, 71} <= shown and not shown & set(range(4, 44))
    assert "render_cache_limit" in scan.text
    # only the leading file is scanned; without scan tokens there is no scan
    assert helper.path == "other.py" and helper.start_line == 1
    plain = slice_items(ranked, files.get, words, focus=2, terms=terms)
    assert [i.path for i in plain] == ["m.py", "other.py"]


def test_a_small_leading_file_is_scanned_whole_and_its_spans_show_no_line_twice():
    lines = module_with_functions()
    ranked = rank_files(
        [
            Evidence("m.py", 4, 43, "parse(text)", 1.0, "localizer"),
            Evidence("m.py", 44, 83, "render(text)", 0.9, "localizer"),
        ]
    )
    items = slice_items(ranked, {"m.py": lines}.get, words, scan_tokens=10_000)
    assert len(items) == 2  # render's lines were all shown by the scan
    scan = items[1]
    shown = {
        n for a, b in (scan.shown or ((scan.start_line, scan.end_line),)) for n in range(a, b + 1)
    }
    assert shown == set(range(1, len(lines) + 1)) - set(range(4, 44))


def test_a_term_of_the_title_weighs_more_than_one_of_the_body():
    lines = ["def f(x):"] + [f"    v{i} = x" for i in range(60)]
    lines[20], lines[45] = "    if retry_budget:", "    if cache_limit:"
    costs = [3] * len(lines)
    task = "cache_limit ignored\nIt happens when retry_budget is set."
    assert title_terms(task) == {"cache_limit", "cache", "limit", "ignored"}
    room = 40  # the head (a third) and one window of seven lines
    plain = pick_rows(lines, costs, room, line_terms(task), 2)
    assert 20 in plain and 45 not in plain  # equally rare: the earlier line
    titled = pick_rows(lines, costs, room, line_terms(task), 2, title=title_terms(task))
    assert 45 in titled and 20 not in titled


def test_a_leading_file_too_long_to_chunk_is_not_scanned():
    lines = module_with_functions() + ["x = 'padding'" + " " * 10_000] * 60
    ranked = rank_files([Evidence("m.py", 4, 43, "parse(text)", 1.0, "localizer")])
    items = slice_items(ranked, {"m.py": lines}.get, words, scan_tokens=10_000)
    assert [(i.start_line, i.end_line) for i in items] == [(4, 43)]
