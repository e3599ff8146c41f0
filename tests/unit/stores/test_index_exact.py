"""Term extraction for exact search and locating matches in chunks."""

from __future__ import annotations

import pytest

from engram.stores.codeindex import Located, exact_terms, grep_terms, locate_on_the_fly
from engram.stores.files import FileDerived


def test_exact_terms_takes_code_like_words_quotes_and_paths():
    text = (
        "Fix `Context.invoke` when parse_args gets an Option; see src/click/core.py and "
        'the "no such option" message. HTTPServer and getValue too. Visit https://x.io/a_b'
    )
    terms = exact_terms(text)
    assert terms[:2] == ["Context.invoke", "parse_args"]
    assert "no such option" not in terms  # prose in quotes is not code
    assert "src/click/core.py" in terms
    assert "HTTPServer" in terms and "getValue" in terms
    assert "Fix" not in terms and "Option" not in terms and "a_b" not in terms


def test_quoted_plain_words_need_length_or_code_shape():
    assert exact_terms("use `str` or `name`, not `validators`; `or_` and `run()`") == [
        "validators",
        "or_",
        "run",
    ]


def test_exact_terms_splits_dotted_names_and_strips_calls():
    assert exact_terms("call attr.evolve() then run_it( later") == [
        "attr.evolve",
        "evolve",
        "run_it",
    ]
    assert exact_terms("just plain words here") == []


@pytest.mark.integration  # runs ripgrep
def test_grep_terms_scores_rare_terms_and_definitions(tmp_path):
    (tmp_path / "a.py").write_text("def load_config(path):\n    return path\n")
    (tmp_path / "b.py").write_text(
        "from a import load_config\n\nload_config('x')\nshared_name = 1\n"
    )
    (tmp_path / "c.py").write_text("shared_name = 2\n")
    ranked = grep_terms(tmp_path, ["load_config", "shared_name"], locate_on_the_fly(tmp_path))
    best, score = ranked[0]
    assert (best.path, best.kind, best.symbol) == ("a.py", "function", "load_config(path)")
    assert score > ranked[1][1]
    assert {loc.path for loc, _ in ranked} == {"a.py", "b.py", "c.py"}
    assert grep_terms(tmp_path, [], locate_on_the_fly(tmp_path)) == []


def test_locate_on_the_fly_reports_lines_past_the_file_cap(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "b.py").write_text("def g():\n    return 1\n")
    locate = locate_on_the_fly(tmp_path, max_files=1)
    assert locate("a.py", 2).symbol == "f()"
    assert locate("b.py", 2) == Located("b.py", 2, 2, "", "line", "b.py:2")


@pytest.mark.integration  # runs ripgrep
def test_a_common_term_filling_the_line_cap_does_not_hide_a_rare_one(tmp_path, monkeypatch):
    import engram.stores.codeindex._exact as index_exact

    monkeypatch.setattr(index_exact, "MAX_GREP_LINES", 20)
    (tmp_path / "aa.py").write_text("".join(f"request_{i} = request\n" for i in range(40)))
    (tmp_path / "zz.py").write_text("def parse_rare_header(raw):\n    return raw\n")
    ranked = grep_terms(tmp_path, ["request", "parse_rare_header"], locate_on_the_fly(tmp_path))
    assert ranked[0][0].path == "zz.py"
    assert ranked[0][0].symbol == "parse_rare_header(raw)"


def test_known_chunks_are_reused_across_searches_and_dropped_when_the_file_changes(
    tmp_path, monkeypatch
):
    file = tmp_path / "a.py"
    file.write_text("def f():\n    return 1\n")
    # every write is long settled by "now"
    monkeypatch.setattr("engram.stores.files._derived.time.time_ns", lambda: 2**62)
    known: FileDerived[list[Located]] = FileDerived()
    first = locate_on_the_fly(tmp_path, known=known)("a.py", 2)
    assert first == locate_on_the_fly(tmp_path)("a.py", 2)
    assert len(known) == 1
    chunk_file_calls = []
    monkeypatch.setattr(
        "engram.stores.codeindex._exact.chunk_file",
        lambda *a: chunk_file_calls.append(a) or [],
    )
    assert locate_on_the_fly(tmp_path, known=known)("a.py", 2) == first
    assert chunk_file_calls == []
    file.write_text("\n\ndef g():\n    return 22\n")
    assert locate_on_the_fly(tmp_path, known=known)("a.py", 4) is None  # chunked again
    assert len(chunk_file_calls) == 1
