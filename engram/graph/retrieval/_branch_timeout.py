"""Per-branch timeout for the parallel retrieval fan-out: a slow or failing branch degrades.

``bounded(node, name=...)`` wraps a synchronous retrieval node so it runs in its own daemon
thread under a timeout of ``runtime.context.branch_timeout_ms``. LangGraph runs the wrapper, a
synchronous node too, in its worker pool, so no event loop runs in either thread: the branch's
blocking work (files, SQLite, Chroma, ripgrep) never touches the server's loop. A timeout, or a
``StoreError``/``OSError`` raised by the branch, becomes a note in state instead of failing the
turn. The thread runs in a copy of the caller's context variables, so LangGraph's config stays
visible inside the node. A timed-out thread is abandoned, not killed; being a daemon it never
holds the process open.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from langgraph.runtime import Runtime

from engram.graph._context import Context
from engram.graph._node_entry import node_entry
from engram.stores import StoreError

MS_PER_SECOND = 1000
"""Milliseconds per second (timeouts are settings in ms; threads wait in seconds)."""

RETRIEVAL_BRANCHES = ("search_exact", "search_semantic")
"""Nodes that start in parallel once Phase 0 is done (a router may return this list)."""

T = TypeVar("T")

Node = Callable[..., Mapping[str, Any]]
"""A synchronous LangGraph node: ``(state, runtime, **bound) -> partial update``."""


def timeout_note(name: str, timeout_ms: int) -> str:
    """Return the note recorded when branch ``name`` times out."""
    return f"{name} timed out after {timeout_ms} ms; continuing with the other branches"


def failure_note(name: str, error: BaseException, elapsed_ms: int) -> str:
    """Return the note recorded when branch ``name`` fails with an expected error."""
    hint = getattr(error, "hint", "")
    tail = f" ({hint})" if hint else ""
    return f"{name} failed after {elapsed_ms} ms: {error}{tail}; continuing with the other branches"


def call_bounded(fn: Callable[[], T], timeout_ms: int) -> T:
    """Call blocking ``fn`` in a daemon thread and wait at most ``timeout_ms`` for it.

    For synchronous code (a node's worker thread) that must not hang on a backend. The
    thread runs in a copy of the caller's context variables and is abandoned on timeout.

    Raises:
        TimeoutError: ``fn`` did not return in time.
        BaseException: Whatever ``fn`` raised.
    """
    done = threading.Event()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            box["value"] = context.run(fn)
        except BaseException as exc:  # re-raised in the caller's thread below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="engram-bounded", daemon=True).start()
    if not done.wait(timeout_ms / MS_PER_SECOND):
        raise TimeoutError(f"no result after {timeout_ms} ms")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def bounded(node: Node, *, name: str) -> Node:
    """Wrap a retrieval node with the per-branch timeout and degradation.

    Args:
        node: A synchronous node ``(state, runtime, **bound)``; keyword arguments bound
            later (``deps=…``) are passed through.
        name: The node name LangGraph should use (the wrapper takes it as ``__name__``).

    Returns:
        A synchronous node with the same call shape. On timeout it returns
        ``{"notes": [timeout_note(...)]}``; on ``StoreError`` or ``OSError`` it returns a
        failure note; other exceptions propagate (they are bugs, not degradations).
    """

    def run(state: Any, runtime: Runtime[Context], **bound: Any) -> dict[str, Any]:
        timeout_ms = runtime.context.branch_timeout_ms
        started = time.perf_counter()
        try:
            return call_bounded(lambda: dict(node(state, runtime, **bound)), timeout_ms)
        except TimeoutError:
            return {"notes": [timeout_note(name, timeout_ms)], "degraded_branches": [name]}
        except (StoreError, OSError) as exc:
            elapsed = int((time.perf_counter() - started) * MS_PER_SECOND)
            return {"notes": [failure_note(name, exc, elapsed)], "degraded_branches": [name]}

    run.__name__ = name
    run.__qualname__ = name
    run.__doc__ = f"Run ``{name}`` under the per-branch timeout (see ``branch_timeout``)."
    return run


def wire_retrieval(
    graph: Any,
    deps: Any,
    *,
    sources: Sequence[str],
    search_exact: Node,
    search_semantic: Node,
    expand_relations: Node | None,
    pack_context: Node,
) -> None:
    """Add the retrieval fan-out and the pack to an uncompiled ``StateGraph``.

    ``search_exact`` and ``search_semantic`` run in parallel from every node in ``sources``,
    each under the per-branch timeout; both join at ``expand_relations`` (also bounded, since
    it walks the graph from their hits), which feeds ``pack_context``. Without
    ``expand_relations`` the searches join at ``pack_context`` directly. Routing after
    ``pack_context`` is left to the caller. Nodes get ``deps`` bound as a keyword.
    """
    for name, node in (("search_exact", search_exact), ("search_semantic", search_semantic)):
        graph.add_node(name, node_entry(bounded(node, name=name), deps, name=name))
    graph.add_node("pack_context", node_entry(pack_context, deps))
    join = "pack_context"
    if expand_relations is not None:
        graph.add_node(
            "expand_relations",
            node_entry(bounded(expand_relations, name="expand_relations"), deps),
        )
        graph.add_edge("expand_relations", "pack_context")
        join = "expand_relations"
    for source in sources:
        for branch in RETRIEVAL_BRANCHES:
            graph.add_edge(source, branch)
    graph.add_edge(list(RETRIEVAL_BRANCHES), join)
