"""Edge accuracy of the code graph on the hand-written fixture projects.

Usage: .venv/bin/python bench/graph/edge_accuracy.py [--show-errors]
Prints precision/recall per language and relation against tests/fixtures/graph/<lang>/edges.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engram.stores.relations._index import build_relation_index

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graph"
RELATIONS = ("contains", "imports", "inherits", "implements", "calls")


def truth_of(folder: Path) -> dict[str, set[tuple[str, str]]]:
    data = json.loads((folder / "edges.json").read_text())
    out = {}
    for rel in RELATIONS:
        out[rel] = {tuple(s.strip() for s in e.split("->")) for e in data["edges"].get(rel, [])}
    return out


def predicted_of(folder: Path) -> dict[str, set[tuple[str, str]]]:
    relation_index = build_graph_for(folder)
    out: dict[str, set[tuple[str, str]]] = {rel: set() for rel in RELATIONS}
    for src, dst, rel in relation_index.graph.edges(keys=True):
        out[rel].add((src, dst))
    return out


def build_graph_for(folder: Path):
    from engram.stores.relations import RelationIndex

    graph = RelationIndex()
    build_relation_index(folder, graph)
    return graph


def score(truth: set, predicted: set) -> tuple[float | None, float | None]:
    hit = len(truth & predicted)
    precision = hit / len(predicted) if predicted else (None if not truth else 0.0)
    recall = hit / len(truth) if truth else None
    return precision, recall


def main() -> None:
    show = "--show-errors" in sys.argv
    rows = []
    for folder in sorted(p for p in FIXTURES.iterdir() if (p / "edges.json").exists()):
        truth, predicted = truth_of(folder), predicted_of(folder)
        for rel in RELATIONS:
            p, r = score(truth[rel], predicted[rel])
            rows.append((folder.name, rel, len(truth[rel]), len(predicted[rel]), p, r))
            if show:
                for e in sorted(predicted[rel] - truth[rel]):
                    print(f"  FP {folder.name} {rel}: {e[0]} -> {e[1]}")
                for e in sorted(truth[rel] - predicted[rel]):
                    print(f"  FN {folder.name} {rel}: {e[0]} -> {e[1]}")
    fmt = lambda v: "  n/a" if v is None else f"{v:5.3f}"  # noqa: E731
    print(f"{'language':<12}{'relation':<12}{'true':>6}{'found':>7}{'prec':>8}{'recall':>8}")
    for lang, rel, nt, np_, p, r in rows:
        print(f"{lang:<12}{rel:<12}{nt:>6}{np_:>7}{fmt(p):>8}{fmt(r):>8}")


if __name__ == "__main__":
    main()
