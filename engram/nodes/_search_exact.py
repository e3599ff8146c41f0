"""Node ``search_exact``: grep the identifiers, quoted strings and paths named in the task."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State, StateUpdate
from engram.stores import StoreError
from engram.stores.codeindex import (
    Located,
    exact_terms,
    grep_terms,
    locate_on_the_fly,
    smallest_containing,
)
from engram.stores.files import FileDerived

MAX_EXACT_HITS = 20
"""Chunks kept from exact search."""

MAX_CHUNKED_FILE_BYTES = 128 * 1024
"""Largest file parsed into chunks to place its matches; matches in larger files (vendored
JavaScript, the biggest test modules) are kept as single lines. Parsing costs about
0.1–0.3 ms per KB, and the search parses up to MAX_EXACT_HITS files."""


def bounded_locator(
    root: Path,
    max_file_bytes: int = MAX_CHUNKED_FILE_BYTES,
    *,
    known: FileDerived[list[Located]] | None = None,
    indexed: Callable[[str], Sequence[Located] | None] | None = None,
) -> Callable[[str, int], Located | None]:
    """Return a locator that chunks matched files up to ``max_file_bytes`` each.

    A match in a larger file is located as its single line, so the cost of a search does not
    depend on how big the matched files are, and the same tree and terms always give the
    same locations. ``known`` keeps files' chunks between searches (see
    ``locate_on_the_fly``); ``indexed`` gives a file's chunks as the code index holds them
    while the file is unchanged (the same chunks, without parsing it), or None.
    """
    chunked = locate_on_the_fly(root, known=known)
    small: dict[str, bool] = {}
    as_indexed: dict[str, Sequence[Located] | None] = {}
    """Each file's indexed chunks, asked once per file (a ``stat`` each), not once per line."""

    def locate(path: str, line: int) -> Located | None:
        if path not in small:
            try:
                small[path] = (root / path).stat().st_size <= max_file_bytes
            except OSError:
                return None
            as_indexed[path] = indexed(path) if indexed is not None and small[path] else None
        if small[path]:
            chunks = as_indexed[path]
            return chunked(path, line) if chunks is None else smallest_containing(chunks, line)
        return Located(path, line, line, "", "line", f"{path}:{line}")

    return locate


def _search(context: Context, task: str, deps: Deps) -> list[dict[str, Any]]:
    root = context.project_path
    index = deps.opened_code_index(context)  # open already (a branch, a warm server): no wait
    indexed = index.indexed_chunks if index is not None else None
    locate = bounded_locator(root, known=deps.located_chunks, indexed=indexed)
    located = grep_terms(
        root, exact_terms(task), locate, max_files=MAX_EXACT_HITS, ignore_check=deps.ignore_files
    )
    return [
        {
            "path": loc.path,
            "start_line": loc.start_line,
            "end_line": loc.end_line,
            "symbol": loc.symbol,
            "kind": loc.kind,
            "score": round(score, 6),
            "source": "exact",
        }
        for loc, score in located[:MAX_EXACT_HITS]
    ]


def search_exact(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Find the chunks that contain the code-like terms of the task (ripgrep, no index)."""
    if not exact_terms(state.task):
        return {"code_hits": []}
    try:
        hits = _search(runtime.context, state.task, deps)
    except (StoreError, OSError) as exc:
        return {"code_hits": [], "notes": [f"exact search failed: {exc}"]}
    return {"code_hits": hits}
