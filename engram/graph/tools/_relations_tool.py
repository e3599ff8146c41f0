"""The ``relation_index`` model tool and the plain-text/JSON rendering of graph answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from engram.graph._context import Context
from engram.graph._deps import Deps
from engram.graph.tools._function import ToolFunction
from engram.stores import IndexNotBuiltError, StoreError
from engram.stores.files import display_path
from engram.stores.relations import RELATIONS

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from engram.stores.relations import Answer, Slice, SymbolInfo

# The graph's queries (NetworkX, tree-sitter) and LangChain are imported when the tool runs:
# the MCP server lists this tool without loading them.

MAX_TOOL_DEPTH = 5
MAX_TOOL_LINES = 200
TOOL_DESCRIPTION = (
    "Answer structural questions about the project's code from its relation index: who calls a "
    "function (callers), what it calls (callees), subclasses, implementations, file or symbol "
    "dependencies and dependents, impact (transitive dependents), or the path between two "
    "symbols (relation='path' with to=OTHER). Symbols may be bare names (check), qualified "
    "names (LoginService.check, login_service.LoginService.check) or file paths; an ambiguous "
    "name lists the candidates."
)


class RelationsArgs(BaseModel):
    """Arguments of the ``relation_index`` tool."""

    symbol: str = Field(description="Function, method, class or file to ask about.")
    relation: str = Field(default="callers", description=f"One of: {', '.join(RELATIONS)}.")
    depth: int = Field(default=1, description="How many hops to follow (1-5).")
    to: str = Field(default="", description="Target symbol for relation='path'.")


def symbol_to_dict(info: SymbolInfo) -> dict[str, Any]:
    """Return a symbol as JSON-ready data."""
    return {
        "id": info.id,
        "kind": info.kind,
        "name": info.name,
        "qualname": info.qualname,
        "path": info.path,
        "start_line": info.start_line,
        "end_line": info.end_line,
    }


def answer_to_dict(result: Answer) -> dict[str, Any]:
    """Return an answer as JSON-ready data (the schema of ``engram graph --json``)."""
    return {
        "query": result.symbol.query,
        "symbol": symbol_to_dict(result.symbol.found) if result.symbol.found else None,
        "candidates": [symbol_to_dict(m) for m in result.symbol.matches]
        if result.symbol.ambiguous
        else [],
        "suggestions": list(result.symbol.suggestions),
        "relation": result.relation,
        "depth": result.depth,
        "results": [
            {
                "name": r.name,
                "relation": r.relation,
                "depth": r.depth,
                "via": r.parent,
                "resolved": r.symbol is not None,
                "symbol": symbol_to_dict(r.symbol) if r.symbol else None,
            }
            for r in result.related
        ],
        "path": [symbol_to_dict(s) for s in result.path],
        "problem": result.problem,
    }


def slice_to_dict(piece_slice: Slice) -> dict[str, Any]:
    """Return a slice as JSON-ready data (the schema of ``engram slice --json``)."""
    return {
        "target": piece_slice.target,
        "budget": piece_slice.budget,
        "tokens": piece_slice.tokens,
        "omitted": list(piece_slice.omitted),
        "pieces": [
            {
                "node": p.node,
                "path": p.path,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "symbol": p.symbol,
                "kind": p.kind,
                "reason": p.reason,
                "depth": p.depth,
                "tokens": p.tokens,
                "text": p.text,
            }
            for p in piece_slice.pieces
        ],
    }


def _where(info: SymbolInfo) -> str:
    if info.kind == "file":
        return display_path(info.path)
    return (
        f"{display_path(info.qualname)} ({info.kind}) {display_path(info.path)}:"
        f"{info.start_line}-{info.end_line}"
    )


def render_answer(result: Answer) -> str:
    """Render an answer as plain text, one result per line."""
    if result.problem and not result.path:
        return result.problem
    head = result.symbol.found
    if result.relation == "path":
        return "\n".join(["path:", *(f"  {_where(s)}" for s in result.path)])
    lines = [
        f"{result.relation} of {_where(head) if head else result.symbol.query} "
        f"(depth {result.depth}):"
    ]
    if not result.related:
        lines.append("  (none)")
    for r in result.related[:MAX_TOOL_LINES]:
        where = (
            _where(r.symbol)
            if r.symbol
            else f"{r.name} (unresolved: outside the project or not statically known)"
        )
        lines.append(f"  {'  ' * (r.depth - 1)}[{r.relation}] {where}")
    if len(result.related) > MAX_TOOL_LINES:
        lines.append(f"  … {len(result.related) - MAX_TOOL_LINES} more")
    return "\n".join(lines)


def build_relations_tool(context: Context, deps: Deps) -> BaseTool:
    """Return the ``relation_index`` tool bound to the run's project graph."""
    return relations_function(context, deps).to_tool()


def relations_function(context: Context, deps: Deps) -> ToolFunction:
    """Return the ``relation_index`` tool bound to the run's project graph, before LangChain."""

    def relation_index(symbol: str, relation: str = "callers", depth: int = 1, to: str = "") -> str:
        from engram.stores.relations import GraphQueries, answer

        try:
            graph = deps.relation_index(context)
        except IndexNotBuiltError:
            return "no relation index for this project yet (the user can run `engram index`)"
        except StoreError as exc:
            return f"relation index unavailable: {exc}"
        if graph is None:
            return "no relation index is configured for this run"
        try:
            result = answer(
                GraphQueries(graph), symbol, relation, max(1, min(depth, MAX_TOOL_DEPTH)), to
            )
        except ValueError as exc:
            return str(exc)
        return render_answer(result)

    return ToolFunction("code_graph", TOOL_DESCRIPTION, relation_index, RelationsArgs)
