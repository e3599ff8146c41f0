"""The examples of README "Use engram from Python" run as written, each in its own process.

Examples that need a model talk to the real HTTP OpenAI stub (which rejects histories with
unanswered tool calls); the assertions are on what each example printed and on the requests
the stub received.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RUN_TIMEOUT_S = 240
TASK = "Where is the cart total computed?"
ANSWER = "cart_total in src/shop/cart.py (line 4) adds the prices."
FACT = "Prices in the shop are stored in cents"
WRAPPED = 'trust="untrusted-data"'


def stub_script(body: dict[str, Any]) -> dict[str, Any]:
    """Read the cart module after the user's request, answer after the tool result."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return {"content": ANSWER}
    return {
        "content": "",
        "tool_calls": [{"name": "read_file", "args": {"path": "src/shop/cart.py"}}],
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (root / "src" / "shop" / "cart.py").write_text(
        '"""The shopping cart."""\n\n\n'
        "def cart_total(prices: list[int]) -> int:\n"
        "    return sum(prices)\n",
        encoding="utf-8",
    )
    (root / "src" / "shop" / "checkout.py").write_text(
        "from shop.cart import cart_total\n\n\n"
        "def checkout(prices):\n    return cart_total(prices)\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def indexed(project: Path) -> Path:
    """The project indexed by ``engram index`` (what the README asks for first)."""
    engram = Path(sys.executable).parent / "engram"
    done = subprocess.run(
        [str(engram), "index", str(project)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env={**os.environ, "ENGRAM_EMBEDDING_PROVIDER": "hash"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return project


def run_example(name: str, *args: str, **env: str) -> str:
    full_env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test",
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
        **env,
    }
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=full_env,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_build_pack_prints_the_typed_pack(indexed: Path) -> None:
    out = run_example("build_pack.py", str(indexed), TASK, "2000")
    assert "pack: " in out and " of 2000 tokens" in out
    assert "file src/shop/cart.py score=" in out and "why: bm25 #1" in out
    assert "slice src/shop/cart.py:4-5 cart_total(prices: list[int])" in out
    assert '<section name="slices">' in out
    assert "def cart_total(prices: list[int]) -> int:" in out


def test_retrievers_find_code_and_facts(indexed: Path, engram_home: Path) -> None:
    from engram.stores.memory import FactStore
    from engram.stores.project import project_key
    from engram.stores.sqlite import open_memory_store

    with open_memory_store(engram_home) as store:
        FactStore(store).add(
            FACT,
            scope="project",
            project_key=project_key(indexed),
            source="user",
            now=datetime.now(UTC),
        )
    out = run_example("retrievers.py", str(indexed), "cart total prices")
    assert out.startswith("code src/shop/cart.py:4-5 cart_total(prices: list[int])")
    assert "(fused)" in out  # hybrid search over the index
    assert "def cart_total(prices: list[int]) -> int:" in out
    assert "(project, score " in out and FACT in out


def test_invoke_graph_runs_sync_async_and_as_a_subgraph(project: Path) -> None:
    with OpenAIStub(stub_script) as stub:
        out = run_example(
            "invoke_graph.py",
            str(project),
            TASK,
            ENGRAM_MODEL="stub-model",
            ENGRAM_BASE_URL=stub.base_url,
        )
    assert out.count(ANSWER) == 3, out
    assert [line.split(":")[0] for line in out.splitlines()] == ["invoke", "ainvoke", "subgraph"]
    assert not stub.rejected
    assert len(stub.requests) == 6  # tool call + answer, three times
    for request in stub.requests[1::2]:
        tool = request["messages"][-1]
        assert tool["role"] == "tool" and WRAPPED in tool["content"]
        assert "def cart_total" in tool["content"]


def test_middleware_agent_gets_tools_pack_and_budget(indexed: Path) -> None:
    with OpenAIStub(stub_script) as stub:
        out = run_example(
            "middleware_agent.py",
            str(indexed),
            TASK,
            ENGRAM_MODEL="stub-model",
            ENGRAM_BASE_URL=stub.base_url,
        )
    assert f"answer: {ANSWER}" in out
    assert "budget: " in out and " of 32000 tokens" in out and out.rstrip().endswith(": ok")
    assert not stub.rejected
    first, second = stub.requests
    user = next(m for m in first["messages"] if m["role"] == "user")
    assert user["content"].startswith(TASK)
    assert "[engram context]" in user["content"] and '<section name="slices">' in user["content"]
    assert {t["function"]["name"] for t in first["tools"]} >= {
        "read_file",
        "grep_code",
        "search_code",
    }
    assert WRAPPED in second["messages"][-1]["content"]
