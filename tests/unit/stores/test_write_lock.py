"""Write locks: a lock file excludes a second holder; stores without one lock per process."""

from __future__ import annotations

import threading
import time

from langgraph.store.memory import InMemoryStore

from engram.stores._write_lock import file_lock, register_write_lock, write_lock


def _second_holder_waits(hold) -> bool:
    """Hold the lock, start a second holder, and report whether it waited for the release."""
    order: list[str] = []
    started = threading.Event()

    def second() -> None:
        started.set()
        with hold():
            order.append("second")

    with hold():
        thread = threading.Thread(target=second)
        thread.start()
        started.wait()
        time.sleep(0.2)
        order.append("first released")
    thread.join(timeout=5)
    return order == ["first released", "second"]


def test_file_lock_excludes_a_second_holder(tmp_path):
    lock = file_lock(tmp_path / "db.sqlite.lock")
    # Two separate opens of the lock file conflict as two processes would.
    assert _second_holder_waits(lambda: lock("facts"))


def test_write_lock_serializes_on_a_store_without_a_registered_lock():
    store = InMemoryStore()
    assert _second_holder_waits(lambda: write_lock(store, "facts"))


def test_registered_lock_is_taken_by_write_lock(tmp_path):
    store = InMemoryStore()
    taken: list[str] = []

    def factory(name: str):
        taken.append(name)
        return file_lock(tmp_path / "x.lock")(name)

    register_write_lock(store, factory)
    with write_lock(store, "facts"):
        pass
    assert taken == ["facts"]
