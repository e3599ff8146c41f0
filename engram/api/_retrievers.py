"""LangChain retrievers over engram's code index and facts memory.

``CodeRetriever`` returns the code of each hit (hybrid search when the project is indexed,
exact search otherwise) with ``path``, ``start_line``/``end_line``, ``symbol``, ``kind``,
``score`` and ``source`` in the metadata. ``MemoryRetriever`` returns the facts visible from a
project (its own and the global ones) with ``id``, ``scope``, ``score``, ``status`` and
``last_verified``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langgraph.store.base import BaseStore
from pydantic import ConfigDict, Field, PrivateAttr

from engram.api._pack import ensure_openers, settings_for
from engram.graph import Context, Deps
from engram.graph.retrieval import fact_embedder
from engram.graph.tools import SEARCH_CODE_DEFAULT_K, SEARCH_CODE_MAX_K, search_code_hits
from engram.stores.codeindex import CodeHit
from engram.stores.files import PathEscapeError, confine, read_text
from engram.stores.memory import FactStore
from engram.stores.project import memory_key

MEMORY_DEFAULT_K = 10


def _code_of(root: Path, hit: CodeHit) -> str:
    """Return the hit's lines of source ("" when the file cannot be read)."""
    try:
        lines = read_text(confine(root, hit.path)).splitlines()
    except (PathEscapeError, OSError):
        return ""
    return "\n".join(lines[max(0, hit.start_line - 1) : hit.end_line])


class CodeRetriever(BaseRetriever):
    """Find code for a query in one project: one ``Document`` per code location.

    Example:
        >>> retriever = CodeRetriever.for_project("path/to/repo", k=5)
        >>> docs = retriever.invoke("where is the retry delay computed?")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    context: Context
    """Run settings: the project root, the embedder and the Chroma URL of its index."""
    k: int = Field(default=SEARCH_CODE_DEFAULT_K, ge=1, le=SEARCH_CODE_MAX_K)
    """How many code locations to return."""
    _deps: Deps = PrivateAttr(default_factory=lambda: ensure_openers(Deps()))

    @classmethod
    def for_project(
        cls,
        project: str | Path | None = None,
        *,
        k: int = SEARCH_CODE_DEFAULT_K,
        context: Context | None = None,
        **kwargs: Any,
    ) -> CodeRetriever:
        """Return a retriever for ``project`` (default: the settings' project)."""
        return cls(context=settings_for(project, context), k=k, **kwargs)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits, note = search_code_hits(self.context, self._deps, query, self.k)
        root = self.context.project_path
        return [
            Document(
                page_content=_code_of(root, hit),
                metadata={
                    "path": hit.path,
                    "start_line": hit.start_line,
                    "end_line": hit.end_line,
                    "symbol": hit.symbol,
                    "kind": hit.kind,
                    "score": hit.score,
                    "source": hit.source,
                    **({"note": note} if note else {}),
                },
            )
            for hit in hits
        ]


class MemoryRetriever(BaseRetriever):
    """Find the long-term facts that match a query, as seen from one project.

    Example:
        >>> with open_memory_store(Path("~/.engram").expanduser()) as store:
        ...     docs = MemoryRetriever.for_project(store, "path/to/repo").invoke("deploy")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: BaseStore
    """The memory store (``SqliteStore`` in ``ENGRAM_HOME``, Postgres, or any ``BaseStore``)."""
    context: Context
    """Run settings: the project whose facts (besides global ones) are visible."""
    k: int = Field(default=MEMORY_DEFAULT_K, ge=1)
    """How many facts to return."""

    @classmethod
    def for_project(
        cls,
        store: BaseStore,
        project: str | Path | None = None,
        *,
        k: int = MEMORY_DEFAULT_K,
        context: Context | None = None,
        **kwargs: Any,
    ) -> MemoryRetriever:
        """Return a retriever over ``store`` for ``project`` (default: the settings')."""
        return cls(store=store, context=settings_for(project, context), k=k, **kwargs)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        facts = FactStore(self.store, embedder=fact_embedder(self.context))
        found = facts.search(
            query,
            project_key=memory_key(self.context.project_path, self.context.home_path),
            k=self.k,
        )
        return [
            Document(
                page_content=scored.fact.text,
                id=scored.fact.id,
                metadata={
                    "id": scored.fact.id,
                    "scope": scored.fact.scope,
                    "score": scored.score,
                    "status": scored.fact.status,
                    "source": scored.fact.source,
                    "created": scored.fact.created.isoformat(),
                    "last_verified": scored.fact.last_verified.isoformat()
                    if scored.fact.last_verified
                    else None,
                },
            )
            for scored in found
        ]
