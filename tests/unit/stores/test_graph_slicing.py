"""Dependency-closure slices: closure contents, priority, budget fitting and parse checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.stores.relations import RelationIndex, slice_symbol
from engram.stores.relations._index import build_relation_index
from engram.stores.relations._slices import parses

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "graph"


def words(text: str) -> int:
    return len(text.split())


def build(root: Path) -> RelationIndex:
    graph = RelationIndex()
    build_relation_index(root, graph)
    return graph


def project(tmp_path: Path, files: dict[str, str]) -> RelationIndex:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return build(tmp_path)


SOURCE = '''LIMIT = 10


class QuotaError(Exception):
    """Raised past the limit."""

    code = 429

    def describe(self):
        return "quota"


class Base:
    def check(self, n):
        return n


class Meter(Base):
    def check(self, n):
        if n > LIMIT:
            raise QuotaError(n)
        return helper(n)


def helper(n):
    return deep(n) + 1


def deep(n):
    return n * 2
'''


def test_slice_holds_callees_constants_types_and_overridden_method(tmp_path):
    graph = project(tmp_path, {"m.py": SOURCE})
    result = slice_symbol(graph, "m.py::Meter.check", tmp_path, budget=10_000, count_tokens=words)
    reasons = {p.symbol: p.reason for p in result.pieces}
    assert reasons == {
        "Meter.check": "target",
        "helper": "calls",
        "deep": "calls",
        "Base.check": "overrides",
        "LIMIT": "constant",
        "QuotaError": "type",
    }
    error = next(p for p in result.pieces if p.symbol == "QuotaError")
    assert "code = 429" in error.text and "def describe" not in error.text
    assert result.pieces[0].symbol == "Meter.check"
    assert (
        result.tokens
        == sum(p.tokens for p in result.pieces)
        == sum(words(p.text) for p in result.pieces)
    )


def test_slice_fits_the_budget_by_priority(tmp_path):
    graph = project(tmp_path, {"m.py": SOURCE})
    full = slice_symbol(graph, "m.py::Meter.check", tmp_path, budget=10_000, count_tokens=words)
    target = full.pieces[0].tokens
    helper = next(p.tokens for p in full.pieces if p.symbol == "helper")
    small = slice_symbol(
        graph, "m.py::Meter.check", tmp_path, budget=target + helper, count_tokens=words
    )
    assert [p.symbol for p in small.pieces] == ["Meter.check", "helper"]
    assert small.tokens <= small.budget
    assert "m.py::deep" in small.omitted or "m.py::Base.check" in small.omitted


def test_depth_limit_stops_the_closure(tmp_path):
    graph = project(tmp_path, {"m.py": SOURCE})
    shallow = slice_symbol(
        graph, "m.py::Meter.check", tmp_path, budget=10_000, count_tokens=words, max_depth=1
    )
    assert "deep" not in {p.symbol for p in shallow.pieces}


def test_pieces_that_do_not_parse_are_dropped(tmp_path):
    graph = project(tmp_path, {"m.py": "def a():\n    return b()\n\n\ndef b():\n    return 1\n"})
    # The file changes after the graph was built: b's recorded lines now hold broken code.
    (tmp_path / "m.py").write_text("def a():\n    return b()\n\n\ndef b(:\n    return (\n")
    result = slice_symbol(graph, "m.py::a", tmp_path, budget=1_000, count_tokens=words)
    assert [p.symbol for p in result.pieces] == ["a"]
    assert result.omitted == ("m.py::b",)


@pytest.mark.parametrize(
    "language,text,kind",
    [
        ("python", "    def f(self):\n        return 1", "method"),
        ("java", "public int f() { return 1; }", "method"),
        ("typescript", "f(): number { return 1; }", "method"),
        ("go", "func (s *S) F() int { return 1 }", "method"),
    ],
)
def test_parse_check_accepts_methods_alone(language, text, kind):
    assert parses(text, language, kind)
    assert not parses(text.replace("return 1", "return (1"), language, kind)


def test_java_slice_includes_super_method(tmp_path):
    graph = build(FIXTURES / "java")
    result = slice_symbol(
        graph,
        "src/com/acme/repo/CachedUserRepo.java::CachedUserRepo.byId",
        FIXTURES / "java",
        budget=10_000,
        count_tokens=words,
    )
    symbols = {p.symbol for p in result.pieces}
    assert {"UserRepo.byId", "UserRepo.check", "User.getId"} <= symbols
