"""Node entry points for ``invoke`` and ``ainvoke`` alike, with the run settings resolved.

engram's nodes are coroutines ``(state, runtime, *, deps)``. LangGraph runs a coroutine node
only under the async API; a host app that calls ``graph.invoke`` (or embeds the graph in a
synchronous parent graph) needs a synchronous entry too. ``node_entry`` gives each node both:
the async entry awaits the node on the caller's loop, the sync entry runs the same coroutine on
a private event loop. Either way the node sees the caller's LangGraph config (both entries run
in the caller's context variables), so interrupts, stream writers and callbacks keep working.

Both entries also resolve the run settings: a caller that passes no ``context`` (or a parent
graph whose own context is of another type) gets ``Context.from_env()`` — the ``ENGRAM_*``
environment over the defaults — instead of an ``AttributeError`` deep inside a node.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime, get_runtime

from engram.graph.context import Context

__all__ = ["context_or_env", "node_entry", "resolved_runtime", "run_coroutine"]

T = TypeVar("T")

Node = Callable[..., Awaitable[dict[str, Any]]]
"""An async LangGraph node: ``(state, runtime, **bound) -> partial update``."""


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


def node_entry(
    node: Node, deps: Any, *, name: str | None = None, on_loop: Node | None = None
) -> RunnableLambda[Any, dict[str, Any]]:
    """Return a LangGraph node that runs ``node`` under ``invoke`` and ``ainvoke``.

    Args:
        node: The async node; the sync entry runs it on a private event loop.
        deps: Live handles bound as the node's ``deps`` keyword.
        name: Node name (default: the function's name).
        on_loop: What the async entry awaits instead of ``node`` (e.g. the node moved off the
            caller's event loop); default ``node``.
    """
    label = name or node.__name__
    awaited = on_loop or node

    def run(state: Any) -> dict[str, Any]:
        runtime = resolved_runtime(get_runtime())
        return run_coroutine(lambda: node(state, runtime, deps=deps))

    async def arun(state: Any) -> dict[str, Any]:
        return await awaited(state, resolved_runtime(get_runtime()), deps=deps)

    for entry in (run, arun):
        entry.__name__ = entry.__qualname__ = label
        entry.__doc__ = node.__doc__
    return RunnableLambda(run, afunc=arun, name=label)
