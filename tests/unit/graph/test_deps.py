from __future__ import annotations

import threading
import time

import pytest

from engram.graph import Context, Deps
from engram.stores import IndexNotBuiltError


def test_resource_is_opened_once_per_project_even_from_parallel_threads(tmp_path):
    calls = []

    def opener(context):
        calls.append(context.project)
        time.sleep(0.05)
        return object()

    deps = Deps(open_code_index=opener)
    context = Context(project=str(tmp_path))
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(deps.code_index(context))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1
    other = Context(project=str(tmp_path / "other"))
    deps.code_index(other)
    assert len(calls) == 2
    assert deps.relation_index(context) is None  # no opener registered


def test_failed_open_is_remembered_until_forgotten(tmp_path):
    calls = []

    def opener(context):
        calls.append(1)
        raise IndexNotBuiltError("no index")

    deps = Deps(open_relation_index=opener)
    context = Context(project=str(tmp_path))
    for _ in range(3):
        with pytest.raises(IndexNotBuiltError):
            deps.relation_index(context)
    assert len(calls) == 1
    deps.forget("relation_index", context)
    with pytest.raises(IndexNotBuiltError):
        deps.relation_index(context)
    assert len(calls) == 2
