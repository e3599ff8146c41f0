"""Pack feedback persistence: one contract over the in-memory and BaseStore implementations."""

from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from engram.stores import StoreError
from engram.stores.memory import BaseStorePackFeedback, Feedback
from engram.stores.memory._pack_feedback import InMemoryPackFeedback, feedback_namespace


@pytest.fixture(params=["memory", "base-memory", "sqlite"])
def repo(request, tmp_path):
    if request.param == "memory":
        yield InMemoryPackFeedback()
    elif request.param == "base-memory":
        yield BaseStorePackFeedback(InMemoryStore())
    else:
        with SqliteStore.from_conn_string(str(tmp_path / "m.sqlite")) as store:
            store.setup()
            yield BaseStorePackFeedback(store)


def test_missing_feedback_is_empty(repo):
    assert repo.get("/p", "debug") == Feedback()


def test_round_trip_per_project_and_type(repo):
    a = Feedback(hits=(True, False), ratio=0.65, deviations=(0.5,))
    repo.put("/srv/proj.v2", "debug", a)
    repo.put("/srv/proj.v2", "explain", Feedback(hits=(True,)))
    assert repo.get("/srv/proj.v2", "debug") == a
    assert repo.get("/srv/proj.v2", "explain") == Feedback(hits=(True,))
    assert repo.get("/srv/other", "debug") == Feedback()


def test_put_replaces(repo):
    repo.put("/p", "debug", Feedback(ratio=0.6))
    repo.put("/p", "debug", Feedback(ratio=0.55))
    assert repo.get("/p", "debug").ratio == 0.55


def test_namespace_is_store_safe():
    assert feedback_namespace("/a/b.c") == ("pack", "feedback", "/a/b%2Ec")


def test_corrupt_value_raises_store_error():
    store = InMemoryStore()
    store.put(feedback_namespace("/p"), "debug", {"hits": 3})
    with pytest.raises(StoreError):
        BaseStorePackFeedback(store).get("/p", "debug")
