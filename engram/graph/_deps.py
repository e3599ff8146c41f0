"""Live handles a run needs (model, stores, indexes), built by the composition roots.

Nothing here is a module global: ``Deps`` is created by ``engram/cli/_app.py``,
``studio/graph.py`` or the MCP server and handed to ``build_graph(deps)``. Per-project resources
(code index, relation index) are opened lazily and cached on the ``Deps`` instance, keyed by project
root.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from engram.graph._context import Context
from engram.graph._llm import make_model
from engram.graph._warm_resources import WARM_RESOURCES
from engram.graph.retrieval._first_use import BUILDING, BackgroundIndexing, shared_first_use
from engram.stores import IndexNotBuiltError
from engram.stores.codeindex import IgnoreFileCheck
from engram.stores.files import FileDerived

if TYPE_CHECKING:  # importing these costs ~0.5 s at every CLI start-up
    from langchain_core.language_models import BaseChatModel
    from langgraph.store.base import BaseStore

    from engram.graph.pack import Pack
    from engram.graph.tools import McpToolset
    from engram.stores.codeindex import Located, ProjectCodeIndex
    from engram.stores.memory import FactStore
    from engram.stores.relations import RelationIndex

T = TypeVar("T")

FAILED_OPEN_RETRY_S = 30.0
"""How long a resource that failed to open is reported failed before it is tried again."""

ModelFactory = Callable[[Context], "BaseChatModel | None"]


def _no_model(_: Context) -> BaseChatModel | None:
    return None


ResourceName = Literal["code_index", "relation_index", "fact_memory", "mcp_tools"]
"""The per-project resources a ``Deps`` opens on demand and caches per project root."""

Opener = Callable[[Context], T]


@dataclass
class Deps:
    """Handles shared by the nodes of one compiled graph."""

    model_factory: ModelFactory = _no_model
    """Builds the chat model for a run's settings; returns None when none is configured."""

    store: BaseStore | None = None
    """Memory store (facts and experience) used when the runtime does not inject one."""

    count_tokens: Callable[[str], int] | None = None
    """Token counter for budgets; None uses the built-in estimator."""

    open_code_index: Opener[ProjectCodeIndex] | None = None
    """Opens a project's code index; None means retrieval runs without one."""

    open_relation_index: Opener[RelationIndex] | None = None
    """Opens a project's relation index; None means no graph expansion."""

    open_fact_memory: Opener[FactStore] | None = None
    """Opens the facts memory over the store; None lets nodes build one from the store."""

    open_mcp_tools: Opener[McpToolset] | None = None
    """Lists the configured MCP servers' tools; None offers no MCP tools."""

    on_pack: Callable[[Pack], None] | None = None
    """Gets each pack ``pack_context`` fills, as the ``Pack`` itself (item texts included);
    state keeps its JSON value. ``build_pack`` returns what it gets here."""

    located_chunks: FileDerived[list[Located]] = field(default_factory=FileDerived, repr=False)
    """Chunks of the files exact search located matches in, kept while the files are unchanged."""

    ignore_files: IgnoreFileCheck = field(default_factory=IgnoreFileCheck, repr=False)
    """Trees exact search found free of ignore files ripgrep cannot open safely."""

    first_use: BackgroundIndexing = field(default_factory=shared_first_use, repr=False)
    """Indexes a project with no code index in the background (``index_on_first_use``); one
    per process, so no two graphs build or open one project's index at once."""

    _opened: dict[tuple[str, Path], Any] = field(default_factory=dict, repr=False)
    _opened_at: dict[tuple[str, Path], float] = field(default_factory=dict, repr=False)
    _failed: dict[tuple[str, Path], tuple[float, BaseException]] = field(
        default_factory=dict, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def code_index(self, context: Context) -> ProjectCodeIndex | None:
        """Return the project's code index (opened once per project), or None if no opener.

        Raises:
            IndexNotBuiltError: The project has no code index, or its first is being built in
                the background (not opened meanwhile: an embedded Chroma folder opened twice
                at once breaks).
        """
        if self.open_code_index is not None and self.first_use.running(context.project_path):
            raise IndexNotBuiltError(BUILDING)
        return self._resource("code_index", self.open_code_index, context)

    def index_on_first_use(self, context: Context) -> str:
        """Start building the code index of a project that has none; return what to tell.

        Called by a node that found no code index (or one whose first build was cut short):
        the build runs in the background when the project is small enough
        (``engram.graph.retrieval._first_use``), and the next turns open the new index. An
        empty note means first-use indexing is off (``ENGRAM_AUTO_INDEX``) or there is no
        index opener.

        Raises:
            ConfigError: ``ENGRAM_AUTO_INDEX`` is neither off nor a number of files.
        """
        if self.open_code_index is None:
            return ""

        def forget_indexes() -> None:
            self.forget("code_index", context)
            self.forget("relation_index", context)

        forget_indexes()  # a cut-short index opened before is not the one the build writes
        return self.first_use.note_for(context, forget_indexes)

    def relation_index(self, context: Context) -> RelationIndex | None:
        """Return the project's relation index (opened once per project), or None if no opener."""
        return self._resource("relation_index", self.open_relation_index, context)

    def fact_memory(self, context: Context) -> FactStore | None:
        """Return the facts memory for the run (opened once per project), or None."""
        return self._resource("fact_memory", self.open_fact_memory, context)

    def mcp_tools(self, context: Context) -> McpToolset | None:
        """Return the MCP servers' tools (listed once per project), or None if no opener."""
        return self._resource("mcp_tools", self.open_mcp_tools, context)

    def _resource(self, name: ResourceName, opener: Opener[T] | None, context: Context) -> T | None:
        """Return the named per-project resource, opening it once per project root.

        Errors from the opener propagate: nodes turn them into notes.
        """
        if opener is None:
            return None
        key = (name, context.project_path)
        # Parallel branches ask at the same moment; opening one index twice at once breaks
        # embedded Chroma, so opening is serialised (a cached hit costs one lock). A failed
        # open is remembered for a while, so every node of every turn does not pay for it
        # again (a broken 40 MB graph file costs a second to find broken).
        with self._lock:
            if key in self._opened and not self._reopen_due(key):
                return cast("T", self._opened[key])
            failed = self._failed.get(key)
            if failed is not None and time.monotonic() - failed[0] < FAILED_OPEN_RETRY_S:
                raise failed[1]
            try:
                opened = opener(context)
            except Exception as exc:  # re-raised to the caller, which decides
                self._failed[key] = (time.monotonic(), exc)
                raise
            self._opened[key] = opened
            self._opened_at[key] = time.monotonic()
            self._failed.pop(key, None)
            return opened

    def _reopen_due(self, key: tuple[str, Path]) -> bool:
        """Whether a resource opened degraded (a server was down) should be opened again.

        A chat or MCP server process would otherwise keep the stand-in for its lifetime; it
        is tried again as often as a failed open is.
        """
        degraded = bool(getattr(self._opened[key], "degraded", False))
        age = time.monotonic() - self._opened_at.get(key, 0.0)
        return degraded and age >= FAILED_OPEN_RETRY_S

    def opened_code_index(self, context: Context) -> ProjectCodeIndex | None:
        """Return the project's code index if it is open already; never opens it, never waits.

        No lock: an opener may hold it for as long as a hanging backend takes, and reading one
        dict entry is atomic.
        """
        found = self._opened.get(("code_index", context.project_path))
        return cast("ProjectCodeIndex | None", found)

    def forget(self, name: ResourceName, context: Context) -> None:
        """Drop a cached resource so the next access reopens it."""
        with self._lock:
            self._opened.pop((name, context.project_path), None)
            self._failed.pop((name, context.project_path), None)


def make_default_deps(store: BaseStore | None = None) -> Deps:
    """Return the handles of a normal run: the chat model, the store, the project indexes."""
    return Deps(
        model_factory=make_model,
        store=store,
        open_code_index=_open_code_index,
        open_relation_index=_open_relation_index,
        open_fact_memory=None if store is None else fact_memory_opener(store),
        open_mcp_tools=_open_mcp_tools,
    )


# The openers import what they open: an index pulls in Chroma, tree-sitter and NetworkX, which
# commands that never open one (``engram --version``, ``engram memory``, the MCP server until a
# tool needs it) should not pay for.


def _open_code_index(context: Context) -> ProjectCodeIndex:
    from engram.graph.retrieval import open_project_index

    return open_project_index(context)


def _open_relation_index(context: Context) -> RelationIndex:
    keeper = WARM_RESOURCES.get()
    if keeper is not None:
        return keeper.keep("relation_index", context, _load_relation_index)
    return _load_relation_index(context)


def _load_relation_index(context: Context) -> RelationIndex:
    from engram.stores.relations import open_relation_index

    return open_relation_index(context.project_path, context.state)


def _open_mcp_tools(context: Context) -> McpToolset:
    from engram.graph.tools import open_mcp_toolset

    return open_mcp_toolset(context)


def fact_memory_opener(store: BaseStore) -> Opener[FactStore]:
    """Return the opener of the facts kept in ``store`` (with the run's fact embedder)."""
    return partial(_open_facts, memory=store)


def _open_facts(context: Context, memory: BaseStore) -> FactStore:
    from engram.graph.retrieval import fact_embedder
    from engram.stores.memory import FactStore

    return FactStore(memory, embedder=fact_embedder(context))
