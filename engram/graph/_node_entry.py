"""Node entry points for ``invoke`` and ``ainvoke`` alike, with the run settings resolved.

engram's nodes are ``(state, runtime, *, deps)``: plain functions when their work blocks
(files, SQLite, Chroma, ripgrep), coroutines when it is the model's async I/O. ``node_entry``
gives each node a synchronous entry (for ``graph.invoke`` and synchronous parent graphs) and
an asynchronous one. A plain function runs in a worker thread under ``ainvoke``, so no event
loop runs where it blocks (the LangGraph server refuses blocking calls on its loop); a
coroutine is awaited on the caller's loop, or run on a private loop by the sync entry. Either
way the node sees the caller's LangGraph config (every entry runs in the caller's context
variables), so interrupts, stream writers and callbacks keep working.

Both entries also resolve the run settings: a caller that passes no ``context`` (or a parent
graph whose own context is of another type) gets ``Context.from_env()`` — the ``ENGRAM_*``
environment over the defaults — instead of an ``AttributeError`` deep inside a node.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime, get_runtime

from engram.graph._context import Context

T = TypeVar("T")

Node = Callable[..., Any]
"""A LangGraph node ``(state, runtime, **bound) -> partial update``, plain or async."""


def context_or_env(value: object) -> Context:
    """Return ``value`` as run settings, falling back to the environment.

    Args:
        value: What the caller passed as ``context``: a ``Context`` is used as it is; a
            mapping sets the fields it names (others come from the environment); anything
            else (None, a parent graph's own context type) means "not given".

    Raises:
        ConfigError: An ``ENGRAM_*`` variable or a mapping value is invalid.
    """
    if isinstance(value, Context):
        return value
    names = {f.name for f in dataclasses.fields(Context)}
    given = {k: v for k, v in value.items() if k in names} if isinstance(value, Mapping) else {}
    return Context.from_env(**given)


def resolved_runtime(runtime: Runtime[Any]) -> Runtime[Context]:
    """Return ``runtime`` with its context resolved by ``context_or_env``."""
    if isinstance(runtime.context, Context):
        return runtime
    return runtime.override(context=context_or_env(runtime.context))


def run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    """Run the awaitable ``make()`` to completion from synchronous code and return its result.

    It runs on a new event loop in this thread; if this thread already runs a loop (a
    notebook, a sync call from async code) it runs on a new loop in a worker thread instead,
    in a copy of this thread's context variables.
    """

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-sync-node") as pool:
        return pool.submit(context.run, asyncio.run, main()).result()


def node_entry(node: Node, deps: Any, *, name: str | None = None) -> RunnableLambda[Any, Any]:
    """Return a LangGraph node that runs ``node`` under ``invoke`` and ``ainvoke``.

    Args:
        node: The node: a plain function (run in a worker thread under ``ainvoke``) or a
            coroutine function (run on a private event loop under ``invoke``).
        deps: Live handles bound as the node's ``deps`` keyword.
        name: Node name (default: the function's name).
    """
    label = name or node.__name__
    run, arun = _entries(node, deps)
    for entry in (run, arun):
        entry.__name__ = entry.__qualname__ = label
        entry.__doc__ = node.__doc__
    return RunnableLambda(run, afunc=arun, name=label)


def lazy_node_entry(load: Callable[[], Node], deps: Any, *, name: str) -> RunnableLambda[Any, Any]:
    """Return ``node_entry`` for the node ``load()`` returns, loaded when it first runs.

    A graph whose runs mostly stop early (context mode ends at the pack) need not import the
    nodes it never reaches, nor what they import.
    """
    loaded: list[tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Awaitable[Any]]]] = []

    def entries() -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Awaitable[Any]]]:
        if not loaded:  # two first calls at once load it twice: both get the same node
            loaded.append(_entries(load(), deps))
        return loaded[0]

    def run(state: Any) -> dict[str, Any]:
        return entries()[0](state)

    async def arun(state: Any) -> dict[str, Any]:
        update: dict[str, Any] = await entries()[1](state)
        return update

    for entry in (run, arun):
        entry.__name__ = entry.__qualname__ = name
    return RunnableLambda(run, afunc=arun, name=name)


def _entries(
    node: Node, deps: Any
) -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Awaitable[Any]]]:
    """Return the synchronous and asynchronous entries of ``node`` (see ``node_entry``)."""
    if inspect.iscoroutinefunction(node):

        def run(state: Any) -> dict[str, Any]:
            runtime = resolved_runtime(get_runtime())
            return run_coroutine(lambda: node(state, runtime, deps=deps))

        async def arun(state: Any) -> dict[str, Any]:
            update: dict[str, Any] = await node(state, resolved_runtime(get_runtime()), deps=deps)
            return update

    else:

        def run(state: Any) -> dict[str, Any]:
            update: dict[str, Any] = node(state, resolved_runtime(get_runtime()), deps=deps)
            return update

        async def arun(state: Any) -> dict[str, Any]:
            # ``to_thread`` runs in a copy of this task's context variables: config included.
            return await asyncio.to_thread(run, state)

    return run, arun
