"""The search_code model tool: hybrid with an index, exact fallback without."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram.graph import Context, Deps
from engram.graph.tools import SEARCH_CODE_MAX_K
from engram.graph.tools._search_code import build_search_code_tool
from engram.stores.codeindex._index import open_memory_code_index
from engram.stores.embeddings._embedders import HashEmbedder


@pytest.fixture
def root(tmp_path):
    for i in range(40):
        (tmp_path / f"mod_{i}.py").write_text(f"def handler_{i}(event):\n    return event + {i}\n")
    (tmp_path / "router.py").write_text("def dispatch_event(event):\n    return handler_1(event)\n")
    return tmp_path


def test_search_code_uses_the_index(root):
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    tool = build_search_code_tool(Context(project=str(root)), Deps(open_code_index=lambda c: index))
    assert tool.name == "search_code"
    text = tool.invoke({"query": "dispatch_event router"})
    first = text.splitlines()[0]
    assert first.startswith("router.py:1-2  dispatch_event(event) (function, fused")
    assert len(text.splitlines()) == 5


def test_search_code_bounds_top_k(root):
    index = open_memory_code_index(root, embedder=HashEmbedder())
    index.update()
    tool = build_search_code_tool(Context(project=str(root)), Deps(open_code_index=lambda c: index))
    assert len(tool.invoke({"query": "event handler", "top_k": 30}).splitlines()) == 30
    with pytest.raises(ValidationError):
        tool.invoke({"query": "event", "top_k": SEARCH_CODE_MAX_K + 1})


@pytest.mark.integration  # runs ripgrep
def test_search_code_falls_back_to_exact_without_index(root):
    tool = build_search_code_tool(Context(project=str(root)), Deps())
    lines = tool.invoke({"query": "where is dispatch_event?"}).splitlines()
    assert "no code index" in lines[0]
    assert lines[1].startswith("router.py:1-2  dispatch_event(event) (function, exact")


@pytest.mark.integration  # runs ripgrep
def test_grep_code_and_the_exact_fallback_remember_a_clean_tree_for_the_run(root, monkeypatch):
    import os

    import engram.stores.codeindex._ignore_check as ignore_files
    from engram.graph.tools import tool_functions
    from engram.stores.codeindex._ripgrep import find_rg

    if find_rg() is None:
        pytest.skip("needs ripgrep")
    for folder, _, _ in os.walk(root):  # folders edited a minute ago, as in a settled tree
        info = os.stat(folder)
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns - 60 * 10**9))
    listed: list[int] = []
    real = ignore_files._list
    monkeypatch.setattr(ignore_files, "_list", lambda *a, **k: listed.append(1) or real(*a, **k))
    tools = {t.name: t for t in tool_functions(Context(project=str(root)), Deps())}
    for _ in range(2):
        assert "router.py:1:" in tools["grep_code"].func(pattern="dispatch_event")
        assert "dispatch_event" in tools["search_code"].func(query="dispatch_event")
    assert listed == [1]  # the first search listed the folders; the rest read their times
