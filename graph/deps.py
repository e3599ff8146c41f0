"""Live handles a run needs (model, stores, indexes), built by the composition roots.

Nothing here is a module global: ``Deps`` is created by ``graph/cli.py``, ``studio/graph.py`` or
the MCP server and handed to ``build_graph(deps)``. Per-project resources (code index, code
graph) are opened lazily and cached on the ``Deps`` instance, keyed by project root.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.context import Context
from graph.llm import make_model

if TYPE_CHECKING:  # importing these costs ~0.5 s at every CLI start-up
    from langchain_core.language_models import BaseChatModel
    from langgraph.store.base import BaseStore

__all__ = ["Deps", "ModelFactory", "make_default_deps"]

FAILED_OPEN_RETRY_S = 30.0
"""How long a resource that failed to open is reported failed before it is tried again."""

ModelFactory = Callable[[Context], "BaseChatModel | None"]


def _no_model(_: Context) -> BaseChatModel | None:
    return None


@dataclass
class Deps:
    """Handles shared by the nodes of one compiled graph."""

    model_factory: ModelFactory = _no_model
    """Builds the chat model for a run's settings; returns None when none is configured."""

    store: BaseStore | None = None
    """Memory store (facts and experience) used when the runtime does not inject one."""

    count_tokens: Callable[[str], int] | None = None
    """Token counter for budgets; None uses the built-in estimator."""

    openers: dict[str, Callable[[Context], Any]] = field(default_factory=dict)
    """Per-project resource openers by name ("code_index", "code_graph")."""

    _opened: dict[tuple[str, Path], Any] = field(default_factory=dict, repr=False)
    _failed: dict[tuple[str, Path], tuple[float, BaseException]] = field(
        default_factory=dict, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def resource(self, name: str, context: Context) -> Any:
        """Return the named per-project resource, opening it once per project root.

        Returns None when no opener is registered under ``name``. Errors from the opener
        propagate: nodes turn them into notes.
        """
        opener = self.openers.get(name)
        if opener is None:
            return None
        key = (name, context.project_path)
        # Parallel branches ask at the same moment; opening one index twice at once breaks
        # embedded Chroma, so opening is serialised (a cached hit costs one lock). A failed
        # open is remembered for a while, so every node of every turn does not pay for it
        # again (a broken 40 MB graph file costs a second to find broken).
        with self._lock:
            if key in self._opened:
                return self._opened[key]
            failed = self._failed.get(key)
            if failed is not None and time.monotonic() - failed[0] < FAILED_OPEN_RETRY_S:
                raise failed[1]
            try:
                self._opened[key] = opener(context)
            except Exception as exc:  # re-raised to the caller, which decides
                self._failed[key] = (time.monotonic(), exc)
                raise
            self._failed.pop(key, None)
            return self._opened[key]

    def forget(self, name: str, context: Context) -> None:
        """Drop a cached resource so the next ``resource`` call reopens it."""
        with self._lock:
            self._opened.pop((name, context.project_path), None)
            self._failed.pop((name, context.project_path), None)


def make_default_deps(store: BaseStore | None = None) -> Deps:
    """Return the handles of a normal run: the chat model, the store, the project indexes."""
    # Imported here: these modules import ``Deps`` themselves.
    from graph.index_open import fact_embedder, open_project_index
    from stores.code_graph import open_code_graph
    from stores.facts import FactStore

    openers: dict[str, Callable[[Context], Any]] = {
        "code_index": open_project_index,
        "code_graph": lambda context: open_code_graph(context.project_path),
    }
    if store is not None:
        openers["fact_memory"] = lambda context: FactStore(store, embedder=fact_embedder(context))
    return Deps(model_factory=make_model, store=store, openers=openers)
