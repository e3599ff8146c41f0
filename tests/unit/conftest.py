"""Unit tests start no process and no server: a test that needs one is marked integration."""

from __future__ import annotations

import subprocess

import pytest


class _NoSubprocess(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, *args, **kwargs):
        raise AssertionError(
            "a unit test started a subprocess; mark it @pytest.mark.integration "
            f"or move it to tests/integration ({args[0] if args else kwargs.get('args')!r})"
        )


@pytest.fixture(autouse=True)
def no_subprocess(request, monkeypatch):
    """Fail a unit test that starts a subprocess unless it is marked integration."""
    if request.node.get_closest_marker("integration") is None:
        monkeypatch.setattr(subprocess, "Popen", _NoSubprocess)


@pytest.fixture
def python_grep(monkeypatch):
    """Exact search with the pure-Python engine, in this process: a unit test starts no
    ripgrep and no search child (the examples' integration tests run the same code with
    ripgrep; test_exact_search runs the child). A module opts in with
    ``pytestmark = pytest.mark.usefixtures("python_grep")``."""
    from engram.stores.codeindex import _ripgrep as ripgrep_search

    monkeypatch.setattr(ripgrep_search, "find_rg", lambda: None)
    monkeypatch.setattr(ripgrep_search, "_grep_python", ripgrep_search._search_python)
