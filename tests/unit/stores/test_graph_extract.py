"""Extraction golden tests: fixture projects against their hand-written edges, and resolution edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.stores.relations import RelationIndex
from engram.stores.relations._index import build_relation_index

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "graph"
LANGUAGES = ("python", "java", "javascript", "typescript", "go")
RELATIONS = ("contains", "imports", "inherits", "implements", "calls")
MIN_RECALL = 0.85


def edges_of(graph: RelationIndex, relation: str) -> set[tuple[str, str]]:
    return {(s, d) for s, d, r in graph.graph.edges(keys=True) if r == relation}


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


@pytest.fixture(scope="module")
def fixture_graphs() -> dict[str, RelationIndex]:
    return {lang: build(FIXTURES / lang) for lang in LANGUAGES}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("relation", RELATIONS)
def test_fixture_edges_precise_and_complete(fixture_graphs, language, relation):
    truth_file = json.loads((FIXTURES / language / "edges.json").read_text(encoding="utf-8"))
    truth = {tuple(p.strip() for p in e.split("->")) for e in truth_file["edges"][relation]}
    found = edges_of(fixture_graphs[language], relation)
    wrong = found - truth
    assert not wrong, f"invented {relation} edges: {sorted(wrong)}"
    if truth:
        recall = len(found & truth) / len(truth)
        assert recall >= MIN_RECALL, f"missed: {sorted(truth - found)}"


def test_python_alias_relative_import_and_reexport(tmp_path):
    g = project(
        tmp_path,
        {
            "pkg/__init__.py": "from .impl import Engine as PublicEngine\n",
            "pkg/impl.py": "class Engine:\n    def run(self):\n        return 1\n",
            "pkg/sub/use.py": (
                "from .. import PublicEngine as E\n"
                "from ..impl import Engine\n"
                "def go():\n    E().run()\n    return Engine\n"
            ),
        },
    )
    calls = edges_of(g, "calls")
    assert ("pkg/sub/use.py::go", "pkg/impl.py::Engine") in calls
    assert ("pkg/sub/use.py::go", "pkg/impl.py::Engine.run") in calls
    assert ("pkg/sub/use.py", "pkg/__init__.py") in edges_of(g, "imports")
    assert ("pkg/sub/use.py", "pkg/impl.py") in edges_of(g, "imports")


def test_python_local_shadowing_blocks_the_imported_name(tmp_path):
    g = project(
        tmp_path,
        {
            "a.py": "def helper():\n    pass\n",
            "b.py": (
                "from a import helper\n"
                "def uses():\n    helper()\n"
                "def shadows(helper):\n    helper()\n"
            ),
        },
    )
    calls = edges_of(g, "calls")
    assert ("b.py::uses", "a.py::helper") in calls
    assert not any(src == "b.py::shadows" for src, _ in calls)
    assert ("helper", "calls") in g.unresolved("b.py::shadows")


def test_unresolved_calls_are_named_not_invented(tmp_path):
    g = project(
        tmp_path,
        {
            "a.py": "import os\nclass A:\n    def f(self, thing):\n        thing.run()\n"
            "        os.path.join('a')\n",
            "b.py": "class B:\n    def run(self):\n        pass\n",
        },
    )
    assert not any(src == "a.py::A.f" for src, _ in edges_of(g, "calls"))
    names = {name for name, _ in g.unresolved("a.py::A.f")}
    assert {"thing.run", "os.path.join"} <= names


def test_java_overloads_resolve_by_arity(tmp_path):
    g = project(
        tmp_path,
        {
            "src/p/A.java": (
                "package p;\npublic class A {\n"
                "  void put(int a) { }\n  void put(int a, int b) { put(a); }\n"
                "  void use() { put(1, 2); }\n}\n"
            ),
        },
    )
    calls = edges_of(g, "calls")
    assert ("src/p/A.java::A.put/2", "src/p/A.java::A.put/1") in calls
    assert ("src/p/A.java::A.use", "src/p/A.java::A.put/2") in calls


def test_go_implicit_interface_and_ts_interfaces(tmp_path):
    g = project(
        tmp_path,
        {
            "shapes/shape.go": (
                "package shapes\ntype Shape interface { Area() float64 }\n"
                "type Sq struct{ s float64 }\nfunc (q Sq) Area() float64 { return q.s * q.s }\n"
                "type Other struct{}\nfunc (o Other) Perimeter() float64 { return 0 }\n"
            ),
            "web/types.ts": "export interface Greeter { greet(): string }\n",
            "web/impl.ts": (
                "import { Greeter } from './types';\n"
                "export class Hello implements Greeter { greet(): string { return 'hi'; } }\n"
            ),
        },
    )
    implements = edges_of(g, "implements")
    assert ("shapes/shape.go::Sq", "shapes/shape.go::Shape") in implements
    assert not any(src == "shapes/shape.go::Other" for src, _ in implements)
    assert ("web/impl.ts::Hello", "web/types.ts::Greeter") in implements


def test_cyclic_type_information_does_not_recurse_forever(tmp_path):
    g = project(
        tmp_path,
        {
            "cyc.py": (
                "def build() -> Node:\n    Node = build()\n    return Node\n\n"
                "class A(B):\n    pass\n\nclass B(A):\n    def run(self):\n        self.run()\n"
                "        build().go()\n"
            ),
        },
    )
    calls = edges_of(g, "calls")
    assert ("cyc.py::B.run", "cyc.py::B.run") in calls
    assert ("cyc.py::B.run", "cyc.py::build") in calls


def test_typescript_imports_of_compiled_names_resolve_to_sources(tmp_path):
    g = project(
        tmp_path,
        {
            "src/util.mts": "export function helper(): number { return 1; }\n",
            "src/main.mts": "import { helper } from './util.mjs';\nexport const run = () => helper();\n",
            "src/other.ts": "import { helper } from './util.js';\nhelper();\n",
        },
    )
    assert ("src/main.mts", "src/util.mts") in edges_of(g, "imports")
    assert ("src/main.mts::run", "src/util.mts::helper") in edges_of(g, "calls")
    assert ("src/other.ts", "src/util.mts::helper") in edges_of(g, "calls")
