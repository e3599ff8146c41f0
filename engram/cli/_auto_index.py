"""Index a project on first use, before a command runs (progress and notes on stderr).

``context``, ``search``, ``run``, ``chat`` and ``mcp`` build the index first, once, as
``engram index`` would, when the project has none and is small enough
(``engram.graph.retrieval._first_use`` says why, and how ``ENGRAM_AUTO_INDEX`` sets the limit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from engram.cli._command_support import err_console
from engram.stores import StoreError, mask_url_passwords

if TYPE_CHECKING:
    from engram.graph import Context


def ensure_index(context: Context) -> None:
    """Build the project's code index when it has none (or a first build was cut short).

    Progress and what happened go to stderr. A project too large to index on first use, or
    an index that cannot be built (a Chroma server down, a full disk), gets a note and the
    command goes on without it, as before; Ctrl-C stops the build, and the next command goes
    on with it.

    Raises:
        ConfigError: ``ENGRAM_AUTO_INDEX`` is neither off nor a number of files.
    """
    from engram.graph.retrieval import (
        AUTO_INDEX_VARIABLE,
        auto_index_limit,
        build_failed_note,
        plan_first_use,
        shared_first_use,
        too_large_note,
    )
    from engram.stores.codeindex import index_is_complete

    limit = auto_index_limit()
    if not limit or index_is_complete(context.state):
        return
    from engram.cli._index_build import build_index

    first = plan_first_use(context.project_path, limit)
    if first.too_large:
        note = too_large_note(first, limit)
        shared_first_use().remember(context.project_path, note)  # the graph does not walk again
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
        return
    err_console.print(
        f"[dim]no code index yet: indexing {first.files:,} files once (`engram index` keeps it "
        f"current; {AUTO_INDEX_VARIABLE}=off turns this off)…[/]",
        highlight=False,
    )
    try:
        run = build_index(context, walk=first.walk)
    except KeyboardInterrupt:
        err_console.print("[yellow]indexing stopped:[/] the next command goes on with it")
        raise
    except (StoreError, OSError) as exc:
        why = mask_url_passwords(str(exc))
        shared_first_use().remember(context.project_path, build_failed_note(why))
        why = escape(why)
        err_console.print(
            f"[yellow]note:[/] the code index could not be built ({why}); going on without "
            "it (`engram index` says more)",
            highlight=False,
        )
        return
    err_console.print(
        f"[dim]indexed {run.stats.files:,} files, {run.stats.chunks:,} chunks in "
        f"{run.summary['seconds_total']:.1f}s[/]",
        highlight=False,
    )
