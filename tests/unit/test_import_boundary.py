"""Starting the CLI or the MCP server loads no heavy library until a command needs one.

Each check runs in a fresh interpreter (an import already made by another test would hide a
regression), so the tests are marked integration: unit tests start no process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

HEAVY = (
    "langchain",
    "langchain_core",
    "langgraph",
    "chromadb",
    "torch",
    "transformers",
    "sentence_transformers",
    "tree_sitter",
    "networkx",
    "openai",
    "langsmith",
)
"""Top-level packages that cost a noticeable part of a second (or more) to import."""

REPORT = "print(json.dumps(sorted(sys.modules)))"
"""Appended to each probe: prints every loaded module as the last line of standard output."""


def loaded_modules(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter and return the modules loaded at its end."""
    done = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\n{REPORT}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def heavy_in(modules: list[str]) -> list[str]:
    """Return the loaded modules that belong to a heavy package."""
    return [name for name in modules if name.split(".")[0] in HEAVY]


@pytest.mark.parametrize(
    "module", ["engram.cli._entry", "engram.cli._app", "engram.cli._mcp_server"]
)
def test_importing_loads_no_heavy_library(module: str):
    heavy = heavy_in(loaded_modules(f"import {module}"))
    assert not heavy, (
        f"importing {module} loads {heavy}; import them inside the command that needs them "
        f"(`python -X importtime -c 'import {module}'` shows who imports them)"
    )


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["memory", "--help"]])
def test_cheap_commands_load_no_heavy_library(args: list[str]):
    heavy = heavy_in(loaded_modules(run_command_code(args)))
    assert not heavy, f"`engram {' '.join(args)}` loads {heavy}"


def test_help_loads_no_run_settings():
    loaded = loaded_modules(run_command_code(["--help"]))
    assert "engram.graph._context" not in loaded, "`engram --help` loads the run settings"


def test_version_loads_neither_the_app_nor_its_libraries():
    loaded = loaded_modules(run_command_code(["--version"]))
    slow = [
        name
        for name in loaded
        if name.split(".")[0] in ("typer", "rich", "click")
        or name.startswith(("importlib.metadata", "engram.cli._app"))
    ]
    assert not slow, f"`engram --version` loads {slow}"


def run_command_code(args: list[str]) -> str:
    """Return code that runs the ``engram`` console script's function with ``args``."""
    return (
        "from engram.cli._entry import main\n"
        f"sys.argv = ['engram', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit_:\n"
        "    assert exit_.code in (0, None), exit_.code"
    )


def test_exact_search_loads_no_index_machinery(tmp_path):
    (tmp_path / "app.py").write_text("def confine(path):\n    return path\n")
    loaded = loaded_modules(
        run_command_code(
            ["search", "def confine", "--mode", "exact", "--path", str(tmp_path), "--json"]
        )
    )
    heavy = [name for name in heavy_in(loaded) if not name.startswith("tree_sitter")]
    assert not heavy, f"`engram search --mode exact` loads {heavy}"
    assert "engram.stores.codeindex._index" not in loaded
    walk_only = [
        name
        for name in ("engram.stores.files._ignore_rules", "engram.graph.tools._search_code")
        if name in loaded
    ]
    assert not walk_only, f"`engram search --mode exact` loads {walk_only}"


def test_memory_list_loads_no_search_stack(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    loaded = loaded_modules(run_command_code(["memory", "list", "--path", str(tmp_path), "--json"]))
    search = [name for name in loaded if name.split(".")[0] in ("bm25s", "scipy", "Stemmer")]
    assert not search, f"`engram memory list` loads {sorted({n.split('.')[0] for n in search})}"


def test_mcp_server_lists_its_tools_without_heavy_libraries(tmp_path):
    code = (
        "import asyncio\n"
        "from engram.cli._mcp_server import build_mcp_server\n"
        "from engram.graph._context import Context\n"
        "from engram.graph._deps import make_default_deps\n"
        f"context = Context(project={str(tmp_path)!r}, engram_home={str(tmp_path / 'home')!r})\n"
        "server = build_mcp_server(context, make_default_deps())\n"
        "names = {tool.name for tool in asyncio.run(server.list_tools())}\n"
        "assert {'read_file', 'grep_code', 'search_code', 'code_graph', 'build_context',\n"
        "        'search_memory'} <= names, names"
    )
    heavy = heavy_in(loaded_modules(code))
    assert not heavy, f"building the MCP server and listing its tools loads {heavy}"


MODEL_PATH = (
    "langchain",
    "langchain_openai",
    "openai",
    "engram.graph.tools",
    "engram.graph.compaction._transaction",
)
"""What only a turn with a model needs: chat models, the agent's tools, compaction."""


def test_context_mode_loads_no_model_path(tmp_path, monkeypatch):
    from engram.builder import MODEL_NODES

    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    (tmp_path / "app.py").write_text("def confine(path):\n    return path\n")
    loaded = loaded_modules(
        run_command_code(["context", "fix confine", "--path", str(tmp_path), "--json"])
    )
    unneeded = MODEL_PATH + tuple(f"engram.nodes.{name}" for name in MODEL_NODES)
    found = [
        name
        for name in loaded
        if name in unneeded or name.startswith(tuple(f"{u}." for u in unneeded))
    ]
    assert not found, f"`engram context` loads {found}"
    assert "engram.nodes._pack_context" in loaded  # it did build the pack


def test_the_model_nodes_loaded_on_first_use_are_the_ones_named():
    from engram.builder import MODEL_NODES, _model_nodes

    assert tuple(_model_nodes()) == MODEL_NODES


def test_hybrid_search_loads_no_langgraph_or_langchain(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGRAM_EMBEDDING_PROVIDER", "hash")
    (tmp_path / "app.py").write_text("def confine(path):\n    return path\n")
    loaded_modules(run_command_code(["index", str(tmp_path)]))
    loaded = loaded_modules(
        run_command_code(["search", "confine a path", "--path", str(tmp_path), "--json"])
    )
    assert "engram.stores.codeindex._index" in loaded  # it did search the index
    framework = sorted(
        {name.split(".")[0] for name in heavy_in(loaded)}
        & {"langchain", "langchain_core", "langgraph", "langsmith", "openai"}
    )
    assert not framework, f"`engram search` loads {framework}"


def test_the_default_embedder_runs_no_model_library():
    modules = loaded_modules(
        "from engram.stores.embeddings._static import StaticEmbedder\n"
        "assert StaticEmbedder().embed(['open a file']).any()"
    )
    ran = [
        m for m in modules if m.split(".")[0] in ("torch", "transformers", "sentence_transformers")
    ]
    assert not ran, f"the static embedder loaded {ran}"
