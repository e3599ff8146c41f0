"""Open a project's code index from run settings (no LangChain: the CLI's start-up path)."""

from __future__ import annotations

import os

from engram.graph._context import Context
from engram.graph._warm_resources import WARM_RESOURCES
from engram.graph.retrieval._vector_outage import ServerVectors, UnreachableVectors
from engram.stores import BackendUnavailableError, IndexNotBuiltError
from engram.stores.codeindex import (
    INDEX_DIR,
    TRANSFORMER_WEIGHTS,
    ProjectCodeIndex,
    open_code_index,
)
from engram.stores.embeddings import Embedder, LazyEmbedder, make_embedder
from engram.stores.project import project_identity

TRANSFORMER_PROVIDERS = frozenset({"minilm", "openai"})
"""Embedding providers whose dense ranking earns an equal vote in hybrid fusion."""


def embedder_for(context: Context) -> Embedder:
    """Build the embedder the run settings name (API key from the environment)."""
    api_key = os.environ.get("ENGRAM_EMBEDDING_API_KEY") or os.environ.get("OPENAI_API_KEY", "")
    return make_embedder(
        context.embedding_provider,
        home=context.home_path,
        model=context.embedding_model,
        url=context.embedding_url,
        api_key=api_key,
    )


def fact_embedder(context: Context) -> LazyEmbedder | None:
    """Return the run's embedder for facts memory, loaded only if a scope grows large enough.

    Dense scores re-rank the lexical candidates once a project sees more than a few hundred
    facts; the hash provider (tests) embeds nothing meaningful, so it gets none.
    """
    if context.embedding_provider == "hash":
        return None
    return LazyEmbedder(lambda: embedder_for(context))


def open_project_index(
    context: Context,
    *,
    create: bool = False,
) -> ProjectCodeIndex:
    """Open the project's code index; the ``Deps.open_code_index`` opener.

    Args:
        context: Run settings (project, embedder, Chroma URL).
        create: Create the index folder when missing (``engram index``); otherwise a missing
            index raises instead of leaving an empty one in the project.

    Raises:
        IndexNotBuiltError: No index exists and ``create`` is False.
        BackendUnavailableError: The embeddings endpoint is unreachable, or the Chroma server
            is and ``create`` is True. Without ``create`` an unreachable Chroma server only
            takes the dense ranking away (``vector_outage`` says so).
    """
    keeper = WARM_RESOURCES.get()
    if keeper is not None and not create:
        return keeper.keep("code_index", context, _open_project_index)
    return _open_project_index(context, create=create)


def _open_project_index(context: Context, *, create: bool = False) -> ProjectCodeIndex:
    root = context.project_path
    if not create and not context.state.path(INDEX_DIR, "manifest.sqlite").exists():
        raise IndexNotBuiltError(f"no code index in {root}")
    weights = TRANSFORMER_WEIGHTS if context.embedding_provider in TRANSFORMER_PROVIDERS else None
    embedder = embedder_for(context)
    server = context.chroma_url
    # A shared server keys the project's vectors by its identity, the same for every clone.
    project_id = project_identity(root).key if server else ""
    try:
        index = open_code_index(
            root,
            embedder=embedder,
            state=context.state,
            chroma_url=server,
            weights=weights,
            project_id=project_id,
        )
    except BackendUnavailableError as exc:
        if create or not server:
            raise  # updating needs the server; an embedded index has no server to lose
        # Searching does not: the manifest and BM25 are local (see ``vector_outage``).
        degraded = open_code_index(
            root,
            embedder=embedder,
            state=context.state,
            weights=weights,
            vectors=UnreachableVectors(server, str(exc)),
        )
        degraded.degraded = True  # a long-lived process opens it again later (``Deps``)
        return degraded
    if server and not create:
        index.vectors = ServerVectors(index.vectors, server)
    return index
