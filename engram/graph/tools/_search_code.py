"""The code index seen from the application: opening it from run settings, the search_code tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from engram.graph._context import Context
from engram.graph._deps import Deps
from engram.graph.retrieval import vector_outage
from engram.graph.retrieval._first_use import BUILDING
from engram.graph.tools._function import ToolFunction
from engram.stores import IndexNotBuiltError, StoreError, mask_url_passwords
from engram.stores.files import display_path

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from engram.stores.codeindex import CodeHit

# The index, its chunker and LangChain are imported when a search runs, not with this module:
# the MCP server lists this tool without loading them.

NO_INDEX_NOTE = "(no code index — exact matches only; run `engram index` for semantic search)"
"""What a search without a project index says about its results."""
BUILDING_NOTE = f"({BUILDING} — exact matches only)"
"""What it says while the project's first index is being built (``Deps.first_use``)."""

SEARCH_CODE_DEFAULT_K = 5
SEARCH_CODE_MAX_K = 30


def _render(hits: list[CodeHit], note: str = "") -> str:
    if not hits:
        return (note + "\n" if note else "") + "no matching code found"
    lines = [note] if note else []
    for hit in hits:
        symbol = f"  {hit.symbol}" if hit.symbol else ""
        lines.append(
            f"{display_path(hit.path)}:{hit.start_line}-{hit.end_line}{symbol} "
            f"({hit.kind}, {hit.source}, score {hit.score:.4f})"
        )
    return "\n".join(lines)


def search_code_hits(
    context: Context, deps: Deps, query: str, k: int = SEARCH_CODE_DEFAULT_K
) -> tuple[list[CodeHit], str]:
    """Return hybrid hits from the project's index, or exact hits and a note saying why.

    ``k`` is clamped to 1..``SEARCH_CODE_MAX_K``; the note is empty when the index answered.
    """
    k = max(1, min(int(k), SEARCH_CODE_MAX_K))
    try:
        index = deps.code_index(context)
        if index is not None and index.is_built():
            hits = index.search(query, mode="hybrid", k=k)
            outage = vector_outage(index)
            return hits, f"({outage})" if outage else ""
        note = NO_INDEX_NOTE
    except IndexNotBuiltError:
        building = deps.first_use.running(context.project_path)
        note = BUILDING_NOTE if building else NO_INDEX_NOTE
    except (StoreError, OSError, RuntimeError, ValueError) as exc:
        note = mask_url_passwords(f"(code index unavailable: {exc} — exact matches only)")
    from engram.stores.codeindex import exact_search_hits

    return exact_search_hits(context.project_path, query, k, deps.ignore_files), note


class SearchCodeArgs(BaseModel):
    """Arguments of the search_code tool."""

    query: str = Field(description="What to find: a description, identifiers, or both.")
    top_k: int = Field(
        default=SEARCH_CODE_DEFAULT_K,
        ge=1,
        le=SEARCH_CODE_MAX_K,
        description=f"How many code locations to return (max {SEARCH_CODE_MAX_K}).",
    )


def build_search_code_tool(context: Context, deps: Deps) -> BaseTool:
    """Return the model tool ``search_code`` (see ``search_code_function``)."""
    return search_code_function(context, deps).to_tool()


def search_code_function(context: Context, deps: Deps) -> ToolFunction:
    """Return the tool ``search_code``: hybrid search over the project's code index.

    Without an index (or with its backend down) the tool falls back to exact search and
    says so in its answer.
    """

    def search_code(query: str, top_k: int = SEARCH_CODE_DEFAULT_K) -> str:
        hits, note = search_code_hits(context, deps, query, top_k)
        return _render(hits, note)

    return ToolFunction(
        name="search_code",
        func=search_code,
        description=(
            "Search the project's code by meaning and keywords (hybrid BM25 + embeddings + "
            "exact identifiers). Returns file:line ranges with the symbol at each; read them "
            "with read_file. Prefer grep_code when you know the exact text."
        ),
        args_schema=SearchCodeArgs,
    )
