"""Per-branch timeout for the parallel retrieval fan-out: a slow or failing branch degrades.

``bounded(node, name=...)`` wraps a synchronous retrieval node so it runs in its own daemon
thread under a limit sized to the work (``branch_limit_ms``): ``runtime.context.branch_timeout_ms``
for a branch this process has run for the project already (or three times what it took then,
if more), and more on a first call, which opens the index, loads the embedder and, for a
Chroma folder of many megabytes, its vectors. LangGraph runs the wrapper, a
synchronous node too, in its worker pool, so no event loop runs in either thread: the branch's
blocking work (files, SQLite, Chroma, ripgrep) never touches the server's loop. A timeout, or a
``StoreError``/``OSError`` raised by the branch, becomes a note in state instead of failing the
turn. The thread runs in a copy of the caller's context variables, so LangGraph's config stays
visible inside the node. A timed-out thread is abandoned, not killed; being a daemon it never
holds the process open.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from langgraph.runtime import Runtime

from engram.graph._context import Context
from engram.graph._node_entry import node_entry
from engram.stores import StoreError

MS_PER_SECOND = 1000
"""Milliseconds per second (timeouts are settings in ms; threads wait in seconds)."""
COLD_START_MS = 2500
"""Added to a branch's first call in a process: importing and opening Chroma, the embedder."""
COLD_MS_PER_MB = 15
"""Added to a first call per megabyte of the project's index folder (vectors loaded on open)."""
WARM_FACTOR = 3
"""A warm branch may take this many times what its last run took, if that exceeds the setting."""
MAX_LIMIT_MS = 15_000
"""No branch waits longer than this, however large the index."""
_LAST_MS: dict[tuple[str, str], int] = {}
"""What each branch took at its last run in this process, by (project, branch)."""

RETRIEVAL_BRANCHES = ("search_exact", "search_semantic")
"""Nodes that start in parallel once Phase 0 is done (a router may return this list)."""

T = TypeVar("T")

Node = Callable[..., Mapping[str, Any]]
"""A synchronous LangGraph node: ``(state, runtime, **bound) -> partial update``."""


def timeout_note(name: str, timeout_ms: int) -> str:
    """Return the note recorded when branch ``name`` times out."""
    return f"{name} timed out after {timeout_ms} ms; continuing with the other branches"


def branch_limit_ms(context: Context, name: str) -> int:
    """Return how long branch ``name`` may run for ``context``'s project, sized to the work.

    A branch this process ran (or gave up on) for the project before gets ``branch_timeout_ms``, or
    ``WARM_FACTOR`` times what it took last time when that is more (a large index is slower
    to search). A first call also pays for opening the index: ``COLD_START_MS`` plus
    ``COLD_MS_PER_MB`` per megabyte of the index folder. Never more than ``MAX_LIMIT_MS``
    (nor less than the setting).
    """
    base = context.branch_timeout_ms
    last = _LAST_MS.get((str(context.project_path), name))
    if last is not None:
        sized = max(base, WARM_FACTOR * last)
    else:
        sized = base + COLD_START_MS + COLD_MS_PER_MB * _index_megabytes(context)
    return max(base, min(sized, MAX_LIMIT_MS))


def record_branch_time(context: Context, name: str, elapsed_ms: int) -> None:
    """Remember what branch ``name`` took, which sizes its next limit."""
    _LAST_MS[(str(context.project_path), name)] = max(0, elapsed_ms)


def _index_megabytes(context: Context) -> int:
    """Return the size of the project's index folder in whole megabytes (0 when absent)."""
    try:
        folder = context.state.path("index")
    except (OSError, ValueError):
        return 0
    total = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total // 1_000_000


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
        A synchronous node with the same call shape, which may run for
        ``branch_limit_ms(context, name)``. On timeout it returns
        ``{"notes": [timeout_note(...)]}``; on ``StoreError`` or ``OSError`` it returns a
        failure note; other exceptions propagate (they are bugs, not degradations).
    """

    def run(state: Any, runtime: Runtime[Context], **bound: Any) -> dict[str, Any]:
        timeout_ms = branch_limit_ms(runtime.context, name)
        started = time.perf_counter()
        try:
            update = call_bounded(lambda: dict(node(state, runtime, **bound)), timeout_ms)
        except TimeoutError:
            record_branch_time(runtime.context, name, 0)  # the first-call allowance is spent
            return {"notes": [timeout_note(name, timeout_ms)], "degraded_branches": [name]}
        except (StoreError, OSError) as exc:
            elapsed = int((time.perf_counter() - started) * MS_PER_SECOND)
            return {"notes": [failure_note(name, exc, elapsed)], "degraded_branches": [name]}
        elapsed = int((time.perf_counter() - started) * MS_PER_SECOND)
        record_branch_time(runtime.context, name, elapsed)
        return update

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
