"""The graph through its entry points: the expand_relations node, the relation_index tool, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from langgraph.runtime import Runtime
from typer.testing import CliRunner

from engram.cli._graph_commands import register
from engram.graph import Context, Deps, State
from engram.graph.tools import build_relations_tool
from engram.nodes import expand_relations
from engram.nodes._expand_relations import NO_GRAPH_NOTE
from engram.stores.relations import GRAPH_FILE, open_relation_index, update_relation_index
from tests.support.state import state_of

pytestmark = pytest.mark.integration  # real tree-sitter, the real CLI

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "graph"


@pytest.fixture
def shop(tmp_path) -> Path:
    root = tmp_path / "shop_project"
    shutil.copytree(FIXTURES / "python", root)
    return root


def deps_for_graph() -> Deps:
    return Deps(open_relation_index=lambda ctx: open_relation_index(ctx.project_path, ctx.state))


def context_of(root: Path) -> Context:
    """Run settings on ``root`` with the test's ENGRAM_HOME (where ``state_of`` looks)."""
    return Context(project=str(root), engram_home=str(state_of(root).home))


def hit(path: str, start: int, end: int, score: float = 1.0) -> dict:
    return {
        "path": path,
        "start_line": start,
        "end_line": end,
        "symbol": "",
        "score": score,
        "source": "exact",
    }


async def test_expand_relations_adds_neighbours_and_slices(shop):
    update_relation_index(shop, state_of(shop))
    state = State(
        task="why does placing an order log twice?", code_hits=[hit("shop/service.py", 13, 14)]
    )
    runtime = Runtime(context=context_of(shop))
    update = expand_relations(state, runtime, deps=deps_for_graph())
    related = update["related_symbols"]
    by_symbol = {(r["symbol"], r["relation"]) for r in related}
    # One entry per span: a direct callee is also a slice piece; the better score wins.
    assert {"Repository.save", "Order.add", "log"} <= {s for s, _ in by_symbol}
    assert ("OrderService.place", "callers") not in by_symbol
    assert ("main", "callers") not in by_symbol  # main does not call place (untyped result)
    assert ("fmt_line", "slice:calls") in by_symbol
    assert all(
        {"path", "start_line", "end_line", "symbol", "kind", "relation", "score"} <= set(r)
        for r in related
    )
    assert related == sorted(related, key=lambda r: -r["score"])


async def test_expand_relations_without_graph_continues_with_a_note(shop):
    state = State(task="x", code_hits=[hit("shop/service.py", 13, 14)])
    runtime = Runtime(context=context_of(shop))
    update = expand_relations(state, runtime, deps=deps_for_graph())
    assert update == {"notes": [NO_GRAPH_NOTE]}
    assert expand_relations(State(task="x"), runtime, deps=deps_for_graph()) == {}
    assert expand_relations(state, runtime, deps=Deps()) == {"notes": [NO_GRAPH_NOTE]}


async def test_expand_relations_rebuilds_a_corrupt_graph(shop):
    graph_file = state_of(shop).folder / GRAPH_FILE
    state_of(shop).make(*GRAPH_FILE.parent.parts)
    graph_file.write_bytes(b"garbage")
    state = State(task="x", code_hits=[hit("shop/service.py", 13, 14)])
    update = expand_relations(state, Runtime(context=context_of(shop)), deps=deps_for_graph())
    assert not any(n.startswith("graph expansion unavailable") for n in update.get("notes", []))
    assert graph_file.read_bytes().startswith(b'{"format":"engram-code-graph"')


def test_code_graph_tool_answers_in_plain_text(shop):
    context = context_of(shop)
    tool = build_relations_tool(context, deps_for_graph())
    assert "no relation index" in tool.invoke({"symbol": "fmt"})
    update_relation_index(shop, state_of(shop))
    tool = build_relations_tool(context, deps_for_graph())
    text = tool.invoke({"symbol": "fmt_line", "relation": "callers", "depth": 2})
    assert "log (function) shop/util.py" in text and "OrderService.place" in text
    assert "ambiguous" in tool.invoke({"symbol": "total"})
    assert "unknown relation" in tool.invoke({"symbol": "fmt", "relation": "friends"})
    path = tool.invoke({"symbol": "main", "relation": "path", "to": "fmt_line"})
    assert path.startswith("path:") and "fmt_line" in path


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    register(app)
    return app


def test_cli_graph_json_schema_and_on_the_fly_build(shop):
    runner = CliRunner()
    result = runner.invoke(
        cli(),
        [
            "graph",
            "Repository",
            "-p",
            str(shop),
            "--relation",
            "subclasses",
            "--depth",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {
        "query",
        "symbol",
        "candidates",
        "suggestions",
        "relation",
        "depth",
        "results",
        "path",
        "problem",
    }
    assert data["symbol"]["id"] == "shop/repo.py::Repository"
    assert [(r["symbol"]["qualname"], r["depth"]) for r in data["results"]] == [
        ("SqlRepository", 1),
        ("MemoryRepository", 2),
    ]
    assert (state_of(shop).folder / GRAPH_FILE).exists()
    assert not (shop / ".engram").exists()  # nothing written into the project


def test_cli_graph_ambiguous_exits_nonzero_with_candidates(shop):
    result = CliRunner().invoke(cli(), ["graph", "total", "-p", str(shop), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert len(data["candidates"]) == 2 and "ambiguous" in data["problem"]


def test_cli_graph_tree_and_slice(shop):
    runner = CliRunner()
    tree = runner.invoke(cli(), ["graph", "OrderService.place", "-p", str(shop), "-r", "callees"])
    assert tree.exit_code == 0 and "Repository.save" in tree.stdout
    sliced = runner.invoke(
        cli(), ["slice", "OrderService.cancel", "-p", str(shop), "--budget", "500", "--json"]
    )
    assert sliced.exit_code == 0, sliced.output
    data = json.loads(sliced.stdout)
    assert data["pieces"][0]["reason"] == "target"
    assert {p["symbol"] for p in data["pieces"]} >= {"Repository.find", "OrderError"}
    assert data["tokens"] <= data["budget"]
