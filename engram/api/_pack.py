"""Build a task's context pack from Python: the pipeline behind ``engram context``.

``build_pack(task, project, budget)`` runs the engram graph in context mode (rules, Phase 0
memory, exact and semantic search, graph expansion, the budgeted pack) and returns the pack as
typed values (``Pack`` with its ``Section``s and ``PackItem``s) plus its text. The CLI command
calls ``context_pack_value`` here, so both give the same pack.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore

from engram.builder import build_graph
from engram.graph import (
    ConfigError,
    Context,
    ContextPackValue,
    Deps,
    EngramError,
    context_or_env,
    make_default_deps,
    run_coroutine,
)
from engram.graph.pack import Pack
from engram.graph.retrieval import open_project_index, preload
from engram.stores.relations import open_relation_index
from engram.stores.sqlite import database_url, open_memory_store

NO_PACK_HINT = "the graph must route context mode through pack_context (engram/builder.py)"


def ensure_openers(deps: Deps) -> Deps:
    """Register the code index and relation index openers unless the composition root did."""
    if deps.open_code_index is None:
        deps.open_code_index = open_project_index
    if deps.open_relation_index is None:
        deps.open_relation_index = lambda context: open_relation_index(
            context.project_path, context.state
        )
    return deps


def settings_for(project: str | Path | None, context: Context | None) -> Context:
    """Return ``context`` (default: from ``ENGRAM_*``) with ``project`` as its root if given."""
    settings = context_or_env(context)
    if project is None:
        return settings
    return settings.replace(project=str(Path(project).expanduser().resolve()))


def pack_settings(
    project: str | Path | None = None,
    budget: int | None = None,
    *,
    context: Context | None = None,
) -> Context:
    """Return context-mode settings for ``project`` (default: the settings' or the CWD).

    Args:
        project: Project root; None keeps the one in ``context`` (or ``ENGRAM_PROJECT``/".").
        budget: Pack budget in tokens; None keeps the settings' (0 derives it from the window).
        context: Settings to start from; None reads the ``ENGRAM_*`` environment.

    Raises:
        ConfigError: The project is not a folder, or a setting is invalid.
    """
    settings = settings_for(project, context)
    root = settings.project_path
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise ConfigError(
            f"project path {root} {what}", hint="pass the project's root folder (e.g. project='.')"
        )
    changes: dict[str, Any] = {"project": str(root), "mode": "context", "auto_approve": True}
    if budget is not None:
        changes["budget"] = budget
    settings = settings.replace(**changes)
    settings.validate()
    return settings


def run_pack_graph(graph: Any, context: Context, task: str) -> ContextPackValue:
    """Run a compiled engram graph in context mode for ``task`` and return its pack.

    The graph runs under ``ainvoke`` on a private event loop (in a worker thread when the
    caller's thread already runs one), so async-only graphs work too.

    Raises:
        EngramError: The graph ended without a pack.
    """
    config = {"configurable": {"thread_id": f"context-{uuid.uuid4().hex[:12]}"}}
    request = {"messages": [HumanMessage(content=task)]}
    state = run_coroutine(
        lambda: graph.ainvoke(request, config, context=context.replace(mode="context"))
    )
    pack = state.get("context_pack") or {}
    if not pack:
        raise EngramError("the graph ended without a context pack", hint=NO_PACK_HINT)
    return cast(ContextPackValue, dict(pack))


@contextmanager
def _memory(context: Context, store: BaseStore | None) -> Iterator[BaseStore]:
    if store is not None:
        yield store
        return
    with open_memory_store(context.home_path, database_url()) as opened:
        yield opened


def context_pack_value(
    task: str, context: Context, *, store: BaseStore | None = None
) -> ContextPackValue:
    """Return the pack for ``task`` in its JSON form (what ``engram context --json`` prints).

    Args:
        task: The task to gather context for.
        context: Settings from ``pack_settings``.
        store: Memory store (facts, experience); None opens the one in ``ENGRAM_HOME``.

    Raises:
        ConfigError: The task is empty.
    """
    return _pack(task, context, store)[0]


def _pack(
    task: str, context: Context, store: BaseStore | None
) -> tuple[ContextPackValue, Pack | None]:
    """Run the graph in context mode; return the pack's JSON value and the ``Pack`` itself."""
    if not task.strip():
        raise ConfigError("the task is empty", hint='describe the task, e.g. "fix the login bug"')
    filled: list[Pack] = []
    with _memory(context, store) as memory:
        deps = make_default_deps(store=memory)
        deps.on_pack = filled.append
        graph = build_graph(deps, store=memory)
        preload(deps, context)
        value = run_pack_graph(graph, context, task)
    return value, filled[-1] if filled else None


def build_pack(
    task: str,
    project: str | Path | None = None,
    budget: int | None = None,
    *,
    context: Context | None = None,
    store: BaseStore | None = None,
) -> Pack:
    """Return the budgeted context pack for ``task`` (no model needed).

    Args:
        task: What the context is for ("fix the retry delay of the HTTP client").
        project: Project root (default: ``context.project``, else ``ENGRAM_PROJECT`` or ".").
        budget: Pack budget in tokens (default: derived from the context window).
        context: Further settings (embedder, window, home); default from ``ENGRAM_*``.
        store: Memory store; None opens the SQLite store in ``ENGRAM_HOME``.

    Returns:
        The pack: ``text`` to paste into a prompt, ``tokens`` and ``budget``, ``sections``
        (rules, memory, code_map, slices, history) whose ``items`` carry ``path``, ``lines``,
        ``symbol``, ``score`` and ``reasons``, and degradation ``notes``.

    Raises:
        ConfigError: The project is not a folder, the task is empty, or a setting is invalid.
    """
    settings = pack_settings(project, budget, context=context)
    _, pack = _pack(task, settings, store)
    if pack is None:  # run_pack_graph raises first; kept for type checkers
        raise EngramError("the graph ended without a context pack", hint=NO_PACK_HINT)
    return pack


async def abuild_pack(
    task: str,
    project: str | Path | None = None,
    budget: int | None = None,
    *,
    context: Context | None = None,
    store: BaseStore | None = None,
) -> Pack:
    """Async ``build_pack``: the same pack, built off the caller's event loop."""
    return await asyncio.to_thread(build_pack, task, project, budget, context=context, store=store)
