"""The search_code model tool: hybrid with an index, exact fallback without."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram.graph.context import Context
from engram.graph.deps import Deps
from engram.graph.tools.search_code_tool import SEARCH_CODE_MAX_K, build_search_code_tool
from engram.stores.codeindex.code_index import open_memory_code_index
from engram.stores.embeddings.embedders import HashEmbedder


@pytest.fixture
def root(tmp_path):
    for i in range(40):
        (tmp_path / f"mod_{i}.py").write_text(f"def handler_{i}(event):\n    return event + {i}\n")
    (tmp_path / "router.py").write_text("def dispatch_event(event):\n    return handler_1(event)\n")
    return tmp_path


def test_search_code_uses_the_index(root):
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    tool = build_search_code_tool(Context(project=str(root)),
                                  Deps(open_code_index=lambda c: index))
    assert tool.name == "search_code"
    text = tool.invoke({"query": "dispatch_event router"})
    first = text.splitlines()[0]
    assert first.startswith("router.py:1-2  dispatch_event(event) (function, fused")
    assert len(text.splitlines()) == 5


def test_search_code_bounds_top_k(root):
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    tool = build_search_code_tool(Context(project=str(root)),
                                  Deps(open_code_index=lambda c: index))
    assert len(tool.invoke({"query": "event handler", "top_k": 30}).splitlines()) == 30
    with pytest.raises(ValidationError):
        tool.invoke({"query": "event", "top_k": SEARCH_CODE_MAX_K + 1})


@pytest.mark.integration  # runs ripgrep
def test_search_code_falls_back_to_exact_without_index(root):
    tool = build_search_code_tool(Context(project=str(root)), Deps())
    lines = tool.invoke({"query": "where is dispatch_event?"}).splitlines()
    assert "no code index" in lines[0]
    assert lines[1].startswith("router.py:1-2  dispatch_event(event) (function, exact")
