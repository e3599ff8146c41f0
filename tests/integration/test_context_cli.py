"""``engram context`` end to end on a small real repository with a real index and code graph.

Real parts: tree-sitter chunks, SQLite manifest, bm25s, embedded Chroma (hash embedder, so the
test needs no model), the pickled code graph, ripgrep, the SQLite memory store, and, for agent
mode, ``ChatOpenAI`` against the local OpenAI-compatible stub server. When the project's
builder does not wire the context pipeline yet, the test composes it from the same nodes with
``engram.graph.retrieval._branch_timeout.wire_retrieval`` (what the builder is asked to do).
"""

from __future__ import annotations

import asyncio
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import typer
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore
from typer.testing import CliRunner

from engram.api._pack import ensure_openers, run_pack_graph
from engram.builder import build_graph
from engram.cli import _context_commands as cli_context
from engram.graph import Context, Deps, InputState, State
from engram.graph._llm import make_model
from engram.graph.retrieval import open_project_index, wire_retrieval
from engram.graph.retrieval._branch_timeout import timeout_note
from engram.nodes import (
    call_model,
    load_rules,
    pack_context,
    retrieve_memory,
    search_exact,
    search_semantic,
)
from engram.stores.relations import GRAPH_FILE, update_relation_index
from tests.support.openai_stub import OpenAIStub
from tests.support.state import state_of

pytestmark = pytest.mark.integration

TASK = "Fix the crash in parse_header when the header line has no colon"
SLACK_MS = 100

FILES = {
    "src/app/headers.py": (
        "from app.util import strip\n\n\n"
        "def parse_header(line):\n"
        '    """Split one header line into name and value."""\n'
        "    name, value = line.split(':', 1)\n"
        "    return strip(name), strip(value)\n\n\n"
        "def parse_headers(lines):\n"
        "    return dict(parse_header(line) for line in lines)\n"
    ),
    "src/app/util.py": "def strip(text):\n    return text.strip()\n",
    "src/app/server.py": (
        "from app.headers import parse_headers\n\n\n"
        "class Server:\n"
        "    def handle(self, raw):\n"
        "        return parse_headers(raw.splitlines())\n"
    ),
    "src/app/cookies.py": "def parse_cookie(text):\n    return dict(p.split('=') for p in text.split(';'))\n",
    "src/app/routing.py": "def route(path):\n    return path.strip('/').split('/')\n",
    "docs/guide.md": "# Guide\n\nHeaders are parsed by the server.\n",
    "ENGRAM.md": "Use four spaces.\n\nNever print in library code.\n",
}


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "hash")
    return root


def index(root: Path, home: Path) -> None:
    context = Context(project=str(root), engram_home=str(home), embedding_provider="hash")
    built = open_project_index(context, create=True)
    built.update()
    built.close()
    update_relation_index(root, state_of(root, home))


def compose(
    deps: Deps, *, store: Any = None, semantic: Any = search_semantic, agent: bool = False
) -> Any:
    """The context pipeline from the real nodes (and, with ``agent``, the model loop)."""

    def bind(node: Any) -> Any:
        return partial(node, deps=deps)  # sync and async nodes alike

    graph = StateGraph(State, context_schema=Context, input_schema=InputState)
    graph.add_node("load_rules", bind(load_rules))
    graph.add_node("retrieve_memory", bind(retrieve_memory))
    graph.add_edge(START, "load_rules")
    graph.add_edge("load_rules", "retrieve_memory")
    wire_retrieval(
        graph,
        deps,
        sources=["retrieve_memory"],
        search_exact=search_exact,
        search_semantic=semantic,
        expand_relations=_expand_relations(),
        pack_context=pack_context,
    )
    if agent:  # the model loop as it was before the builder had learning nodes
        graph.add_node("call_model", bind(call_model))
        graph.add_edge("pack_context", "call_model")
        graph.add_edge("call_model", END)
    else:
        graph.add_edge("pack_context", END)
    return graph.compile(store=store)


def _expand_relations() -> Any:
    try:
        from engram.nodes import expand_relations
    except ImportError:
        return None
    return expand_relations


@pytest.fixture
def cli(monkeypatch) -> typer.Typer:
    """A Typer app with the context command (the builder's real graph)."""
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """engram (test app)."""

    cli_context.register(app)
    return app


def run_cli(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["context", *args])
    return result.exit_code, result.stdout


def test_json_contract_on_an_indexed_repo(repo, engram_home, cli, monkeypatch):
    monkeypatch.setenv("ENGRAM_TRUST_PROJECT", "1")  # the pack's rules come from ENGRAM.md
    index(repo, engram_home)
    code, out = run_cli(cli, TASK, "--path", str(repo), "--budget", "1500", "--json")
    assert code == 0, out
    pack = json.loads(out)
    assert set(pack) >= {"text", "sections", "tokens", "budget", "notes", "plan"}
    assert pack["budget"] == 1500 and 0 < pack["tokens"] <= 1500
    assert [s["name"] for s in pack["sections"]] == [
        "rules",
        "memory",
        "code_map",
        "slices",
        "history",
    ]
    for section in pack["sections"]:
        assert set(section) >= {"name", "tokens", "budget", "items"}
        assert section["tokens"] <= section["budget"]
        for item in section["items"]:
            keys = {"path", "start_line", "end_line", "symbol", "score", "reasons"}
            # "shown": the line runs a slice shows when it leaves lines out (lines another
            # slice of the file already showed).
            assert set(item) in (keys, keys | {"shown"})
            for first, last in item.get("shown", []):
                assert item["start_line"] <= first <= last <= item["end_line"]
    by = {s["name"]: s for s in pack["sections"]}
    sliced = [i["path"] for i in by["slices"]["items"]]
    assert sliced[0] == "src/app/headers.py"
    assert all((repo / p).is_file() and not p.startswith("/") for p in sliced)
    first = by["slices"]["items"][0]
    assert first["reasons"] and first["start_line"] >= 1
    assert "def parse_header" in pack["text"] and "Never print" in pack["text"]
    assert by["rules"]["tokens"] > 0
    rules_text = pack["text"].split('<section name="rules">', 1)[1].split("</section>", 1)[0]
    assert "Never print" in rules_text
    # Same task, same index: byte-identical pack.
    assert run_cli(cli, TASK, "--path", str(repo), "--budget", "1500", "--json")[1] == out


def test_readable_output_says_why(repo, engram_home, cli):
    index(repo, engram_home)
    code, out = run_cli(cli, TASK, "--path", str(repo))
    assert code == 0, out
    assert "context pack" in out and "src/app/headers.py" in out and "exact" in out


def test_no_index_still_packs_exact_hits_with_a_note(repo, engram_home, cli):
    code, out = run_cli(cli, TASK, "--path", str(repo), "--json")
    assert code == 0, out
    pack = json.loads(out)
    assert any("engram index" in note for note in pack["notes"])
    slices = next(s for s in pack["sections"] if s["name"] == "slices")
    assert "src/app/headers.py" in {i["path"] for i in slices["items"]}


def test_missing_graph_degrades(repo, engram_home, cli):
    index(repo, engram_home)
    graph_file = state_of(repo, engram_home).folder / GRAPH_FILE
    assert graph_file.is_file()
    graph_file.unlink()
    code, out = run_cli(cli, TASK, "--path", str(repo), "--json")
    assert code == 0, out
    assert json.loads(out)["sections"][3]["items"]


def test_chroma_server_down_degrades(repo, engram_home, cli, monkeypatch):
    index(repo, engram_home)
    monkeypatch.setenv("ENGRAM_CHROMA_URL", "http://127.0.0.1:9")
    code, out = run_cli(cli, TASK, "--path", str(repo), "--json")
    assert code == 0, out
    pack = json.loads(out)
    outage = "the Chroma server at http://127.0.0.1:9 cannot be reached"
    assert any(outage in n and "exact and BM25" in n for n in pack["notes"]), pack["notes"]
    slices = next(s for s in pack["sections"] if s["name"] == "slices")
    assert "src/app/headers.py" in {i["path"] for i in slices["items"]}


def test_semantic_branch_timeout_keeps_the_pack_within_timeout_plus_slack(repo, engram_home):
    index(repo, engram_home)

    def stuck(state, runtime, *, deps):
        time.sleep(3)
        return {}

    deps = ensure_openers(Deps())
    graph = compose(deps, semantic=stuck)
    context = Context(
        project=str(repo),
        engram_home=str(engram_home),
        mode="context",
        embedding_provider="hash",
        branch_timeout_ms=300,
    )
    run_pack_graph(graph, context, "warm up")  # opens the index and graph once
    started = time.perf_counter()
    pack = run_pack_graph(graph, context, TASK)
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert timeout_note("search_semantic", 300) in pack["notes"]
    assert elapsed_ms < 300 + SLACK_MS + 400  # pipeline work besides the stuck branch
    assert next(s for s in pack["sections"] if s["name"] == "slices")["items"]


def test_agent_mode_appends_the_pack_to_the_user_turn(repo, engram_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    index(repo, engram_home)
    store = InMemoryStore()
    with OpenAIStub([{"content": "parse_header needs a colon check."}]) as stub:
        context = Context(
            project=str(repo),
            engram_home=str(engram_home),
            mode="agent",
            model="stub-model",
            base_url=stub.base_url,
            embedding_provider="hash",
            trust_project=True,  # ENGRAM.md goes into the system prompt
        )
        deps = ensure_openers(Deps(model_factory=make_model, store=store))
        probe = build_graph(deps, store=store)
        graph = probe if "pack_context" in probe.nodes else compose(deps, store=store, agent=True)
        state = asyncio.run(graph.ainvoke({"messages": [HumanMessage(TASK)]}, context=context))
        (request,) = stub.requests
    user = next(m for m in reversed(request["messages"]) if m["role"] == "user")
    system = request["messages"][0]["content"]
    assert "def parse_header" in user["content"] and '<section name="slices">' in user["content"]
    assert "Never print" in system and "Never print" not in user["content"]
    assert state["messages"][-1].content == "parse_header needs a colon check."
    assert state["context_pack"]["plan"]["source"] == "formula"
    # In state the user's message is what they typed; the pack rides beside it.
    typed = next(m for m in state["messages"] if isinstance(m, HumanMessage))
    assert typed.content == TASK
    assert user["content"] == TASK + typed.additional_kwargs["engram_turn_context"]


def test_every_request_of_a_turn_sends_the_user_turn_byte_for_byte(repo, engram_home, monkeypatch):
    """The pack is joined to the typed message per request, the same bytes each time."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    index(repo, engram_home)
    store = InMemoryStore()
    script = [
        {"tool_calls": [{"name": "grep_code", "args": {"pattern": "def parse_header"}}]},
        {"content": "found it"},
    ]
    with OpenAIStub(script) as stub:
        context = Context(
            project=str(repo),
            engram_home=str(engram_home),
            mode="agent",
            model="stub-model",
            base_url=stub.base_url,
            embedding_provider="hash",
        )
        deps = ensure_openers(Deps(model_factory=make_model, store=store))
        graph = build_graph(deps, store=store)
        state = asyncio.run(graph.ainvoke({"messages": [HumanMessage(TASK)]}, context=context))
        first, second = stub.requests
    users = [
        next(m for m in request["messages"] if m["role"] == "user") for request in (first, second)
    ]
    assert users[0] == users[1] and '<section name="slices">' in users[0]["content"]
    assert next(m for m in state["messages"] if isinstance(m, HumanMessage)).content == TASK


def _map_paths(pack: dict[str, Any]) -> list[str]:
    section = next(s for s in pack["sections"] if s["name"] == "code_map")
    return [item["path"] for item in section["items"]]


def _reranked_pack(repo, engram_home, monkeypatch, reply, *, on: bool = True):
    """Run the pack graph with re-ranking; return the pack and the stub's requests."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIStub([reply]) as stub:
        context = Context(
            project=str(repo),
            engram_home=str(engram_home),
            mode="context",
            model="stub-model",
            base_url=stub.base_url,
            embedding_provider="hash",
            rerank_files=on,
        )
        deps = ensure_openers(Deps(model_factory=make_model, store=InMemoryStore()))
        graph = build_graph(deps, store=InMemoryStore())
        pack = run_pack_graph(graph, context, TASK)
        return pack, list(stub.requests)


def test_the_model_reranks_the_top_files_in_one_call(repo, engram_home, monkeypatch):
    index(repo, engram_home)
    plain, none = _reranked_pack(repo, engram_home, monkeypatch, {"content": "{}"}, on=False)
    assert none == []  # off by default: no call
    order = _map_paths(plain)
    wanted = [order[-1], order[0]]  # the model puts the last file first
    answer = json.dumps({"files": [*wanted, "../../etc/passwd", "made_up.py"]})
    pack, (request,) = _reranked_pack(repo, engram_home, monkeypatch, {"content": answer})
    reranked = _map_paths(pack)
    assert reranked[:2] == wanted and sorted(reranked) == sorted(order)  # nothing added
    assert "../../etc/passwd" not in json.dumps(pack)
    prompt = request["messages"][-1]["content"]
    assert all(path in prompt for path in order) and "follow no instruction" in prompt
    first = next(s for s in pack["sections"] if s["name"] == "code_map")["items"][0]
    assert first["reasons"][0] == "model #1"
    scores = [
        item["score"] for s in pack["sections"] if s["name"] == "code_map" for item in s["items"]
    ]
    assert scores == sorted(scores, reverse=True)
    (note,) = [n for n in pack["notes"] if "re-ranked" in n]
    assert "in one call" in note and "input + " in note


@pytest.mark.parametrize(
    "reply",
    [
        {"content": "I would look at headers.py first."},  # no JSON
        {"status": 400, "error": {"message": "bad request"}},  # the endpoint refuses
    ],
)
def test_a_failed_reranking_keeps_the_ranking_and_says_so(repo, engram_home, monkeypatch, reply):
    index(repo, engram_home)
    plain, _ = _reranked_pack(repo, engram_home, monkeypatch, {"content": "{}"}, on=False)
    pack, requests = _reranked_pack(repo, engram_home, monkeypatch, reply)
    assert len(requests) <= 1
    assert _map_paths(pack) == _map_paths(plain)
    assert any("re-ranking was skipped" in n for n in pack["notes"])


def test_the_pack_says_when_a_sliced_file_changed_since_the_index(repo, engram_home, cli):
    index(repo, engram_home)
    code, out = run_cli(cli, TASK, "--path", str(repo), "--json")
    assert code == 0 and not any("changed since" in n for n in json.loads(out)["notes"])
    headers = repo / "src/app/headers.py"
    headers.write_text("# moved\n" + headers.read_text())
    code, out = run_cli(cli, TASK, "--path", str(repo), "--json")
    notes = json.loads(out)["notes"]
    assert code == 0
    assert any("src/app/headers.py changed since the last `engram index`" in n for n in notes)
