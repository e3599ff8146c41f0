"""Index a project on first use: before it, only names and paths find code.

Exact search needs a name, a path or a quoted string; a task in plain words ("fix the add
function") finds nothing in a project never indexed, and the pack it gets is empty. So
``context``, ``search``, ``run``, ``chat`` and ``mcp`` build the index first, once, as
``engram index`` would, when the project has none and is small enough to index in about a
minute. A larger project is told to run ``engram index``; ``ENGRAM_AUTO_INDEX`` sets the
limit or turns it off.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rich.markup import escape

from engram.cli._command_support import err_console
from engram.cli._serve_client import OFF_VALUES
from engram.graph import ConfigError
from engram.stores import StoreError, mask_url_passwords

if TYPE_CHECKING:
    from engram.graph import Context

AUTO_INDEX_FILES = 5_000
"""Most files a project may have to be indexed on first use: indexing takes about a minute
per 5,000 files on two cores (Django 5.0, 5,375 files: 59.5 s, bench/RESULTS.md)."""
AUTO_INDEX_BYTES_PER_FILE = 6_400
"""Text a project may hold per file of the limit to be indexed on first use (32 MB for 5,000
files; mypy's 1,479 files are 15 MB and index in 24 s): a few thousand files of a megabyte
each would take many minutes, and a repository can be made of them."""
AUTO_INDEX_VARIABLE = "ENGRAM_AUTO_INDEX"
ON_VALUES = frozenset({"on", "true", "yes"})


def auto_index_limit() -> int:
    """Return the most files a project may have to be indexed on first use (0: never).

    ``ENGRAM_AUTO_INDEX`` unset or on gives AUTO_INDEX_FILES; off (or 0) turns it off.

    Raises:
        ConfigError: ``ENGRAM_AUTO_INDEX`` is neither off nor a number of files.
    """
    raw = os.environ.get(AUTO_INDEX_VARIABLE, "").strip().lower()
    if not raw or raw in ON_VALUES:
        return AUTO_INDEX_FILES
    if raw in OFF_VALUES:
        return 0
    try:
        limit = int(raw.replace(",", "").replace("_", ""))
    except ValueError:
        limit = -1
    if limit < 0:
        raise ConfigError(
            f"{AUTO_INDEX_VARIABLE}={raw!r} is neither off nor a number of files",
            hint=f"e.g. {AUTO_INDEX_VARIABLE}=20000 (index projects of up to 20,000 files on "
            f"first use) or {AUTO_INDEX_VARIABLE}=off",
        )
    return limit


def ensure_index(context: Context) -> None:
    """Build the project's code index when it has none (or a first build was cut short).

    Progress and what happened go to stderr. A project over the limit (more files than it,
    or more than AUTO_INDEX_BYTES_PER_FILE bytes per file of it), or an index that
    cannot be built (a Chroma server down, a full disk), gets a note and the command goes on
    without it, as before; Ctrl-C stops the build, and the next command goes on with it.
    """
    from engram.stores.codeindex import index_is_complete

    limit = auto_index_limit()
    if not limit or index_is_complete(context.state):
        return
    from engram.cli._index_build import build_index
    from engram.stores.files import walk_project

    walk = walk_project(context.project_path, stop_after=limit)
    files = len(walk.files)
    size = sum(f.size for f in walk.files)
    if walk.stopped or size > limit * AUTO_INDEX_BYTES_PER_FILE:
        what = "files" if walk.stopped else f"text ({size / 1e6:,.0f} MB)"
        err_console.print(
            f"[yellow]note:[/] no code index yet, and this project has more {what} than is "
            f"indexed on first use ({AUTO_INDEX_VARIABLE}={limit}); run `engram index` once "
            "(until then only names, paths and quoted text find code)",
            highlight=False,
        )
        return
    err_console.print(
        f"[dim]no code index yet: indexing {files:,} files once (`engram index` keeps it "
        f"current; {AUTO_INDEX_VARIABLE}=off turns this off)…[/]",
        highlight=False,
    )
    try:
        run = build_index(context, walk=walk)
    except KeyboardInterrupt:
        err_console.print("[yellow]indexing stopped:[/] the next command goes on with it")
        raise
    except (StoreError, OSError) as exc:
        why = escape(mask_url_passwords(str(exc)))
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
