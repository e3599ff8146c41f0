"""Index a project on first use: before it, only names and paths find code.

Exact search needs a name, a path or a quoted string; a task in plain words ("fix the add
function") finds nothing in a project never indexed, and its pack is empty. So a project with
no code index is indexed once, as ``engram index`` would, when it is small enough to index in
about a minute: the CLI commands do it before they run (``engram.cli._auto_index``, with
progress bars), and a graph served by LangGraph (Studio, ``langgraph dev``, LangGraph Server)
or embedded as a library does it in the background (``BackgroundIndexing``), so no run waits
a minute for it (the run that starts it waits for a small project's: ``WAIT_FILES``); the
turns after it search the index. A larger project is told to run
``engram index``; ``ENGRAM_AUTO_INDEX`` sets the limit or turns it off.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engram._switches import OFF_VALUES, ON_VALUES
from engram.graph._errors import ConfigError

if TYPE_CHECKING:
    from engram.graph._context import Context
    from engram.stores.files import WalkReport

AUTO_INDEX_FILES = 5_000
"""Most files a project may have to be indexed on first use: indexing takes about a minute
per 5,000 files on two cores (Django 5.0, 5,375 files: 59.5 s, bench/RESULTS.md)."""
AUTO_INDEX_BYTES_PER_FILE = 6_400
"""Text a project may hold per file of the limit to be indexed on first use (32 MB for 5,000
files; mypy's 1,479 files are 15 MB and index in 24 s): a few thousand files of a megabyte
each would take many minutes, and a repository can be made of them."""
AUTO_INDEX_VARIABLE = "ENGRAM_AUTO_INDEX"
WAIT_FILES = 500
"""A first-use build of at most this many files is waited for by the run that started it
(``BackgroundIndexing.wait``): rq's 133 files index in 1.5 s, scrapy's 541 in 6.7 s
(bench/RESULTS.md), so that run's pack has the index's code map and slices too."""
WAIT_S = 10.0
"""Longest such a wait."""
BUILDING = "no code index yet: it is being built in the background"
"""What a turn is told while the project's first index is being built."""
RECHECK_S = 300.0
"""How long a background first use that could not index (too large a project, a build that
failed) is remembered before a turn tries again."""


def auto_index_limit() -> int:
    """Return the most files a project may have to be indexed on first use (0: never).

    ``ENGRAM_AUTO_INDEX`` unset or on gives AUTO_INDEX_FILES, a number that many files; off
    (or 0) turns it off.

    Raises:
        ConfigError: ``ENGRAM_AUTO_INDEX`` is neither off nor a number of files.
    """
    raw = os.environ.get(AUTO_INDEX_VARIABLE, "").strip().lower()
    if raw in OFF_VALUES:
        return 0
    try:
        limit = int(raw.replace(",", "").replace("_", ""))
    except ValueError:
        limit = AUTO_INDEX_FILES if not raw or raw in ON_VALUES else -1
    if limit < 0:
        raise ConfigError(
            f"{AUTO_INDEX_VARIABLE}={raw!r} is neither off nor a number of files",
            hint=f"e.g. {AUTO_INDEX_VARIABLE}=20000 (index projects of up to 20,000 files on "
            f"first use) or {AUTO_INDEX_VARIABLE}=off",
        )
    return limit


@dataclass(frozen=True)
class FirstUse:
    """Whether a project may be indexed on first use, and the walk that found out."""

    walk: WalkReport
    too_large: str
    """What the project has too much of ("files", "text (40 MB)"); empty when it may be."""

    @property
    def files(self) -> int:
        """Return how many files the walk found (up to the limit)."""
        return len(self.walk.files)


def plan_first_use(root: Path, limit: int) -> FirstUse:
    """Walk the project (at most ``limit`` files) and say whether it is small enough.

    A project is too large with more files than ``limit`` or more than
    AUTO_INDEX_BYTES_PER_FILE bytes of text per file of it; the walk stops at the limit, so a
    huge tree costs no more than ``limit`` files.
    """
    from engram.stores.files import walk_project

    walk = walk_project(root, stop_after=limit)
    size = sum(f.size for f in walk.files)
    too_large = ""
    if walk.stopped:
        too_large = "files"
    elif size > limit * AUTO_INDEX_BYTES_PER_FILE:
        too_large = f"text ({size / 1e6:,.0f} MB)"
    return FirstUse(walk, too_large)


def too_large_note(first: FirstUse, limit: int) -> str:
    """Return what a project too large to index on first use is told."""
    return (
        f"no code index yet, and this project has more {first.too_large} than is indexed on "
        f"first use ({AUTO_INDEX_VARIABLE}={limit}); run `engram index` once (until then only "
        "names, paths and quoted text find code)"
    )


def build_failed_note(why: str) -> str:
    """Return what a project whose first-use build failed (``why``) is told."""
    return (
        f"the code index could not be built on first use ({why}); run `engram index`, which "
        "says more"
    )


@dataclass
class _Attempt:
    """One project's background first use: running, or why it did not index."""

    started: float
    thread: threading.Thread | None = None
    files: int = 0
    note: str = ""
    """Why it did not index (empty while it runs, or once it has indexed)."""


class BackgroundIndexing:
    """First-use indexing for a graph's runs: one background build per project at a time.

    ``note_for`` is what a turn that finds no code index calls: it starts the build (a
    daemon thread: a process that exits mid-build leaves an index the next update repairs, as
    a killed ``engram index`` does) and returns what the turn is told. While the build runs,
    ``running`` is true for the project, and the graph opens no index of it (``Deps``): one
    embedded Chroma folder opened twice at once breaks.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._attempts: dict[Path, _Attempt] = {}

    def running(self, root: Path) -> bool:
        """Whether a first-use build of the project at ``root`` is under way."""
        attempt = self._attempts.get(root)
        return attempt is not None and attempt.thread is not None and attempt.thread.is_alive()

    def wait(self, root: Path) -> float:
        """Wait for a first-use build of at most WAIT_FILES files to end; return the seconds.

        0 when no such build runs for the project (none at all, or a larger one: that one
        is not waited for). A build still running after WAIT_S is left to run.
        """
        attempt = self._attempts.get(root)
        if attempt is None or attempt.thread is None or attempt.files > WAIT_FILES:
            return 0.0
        started = time.monotonic()
        attempt.thread.join(WAIT_S)
        return time.monotonic() - started if not attempt.thread.is_alive() else 0.0

    def remember(self, root: Path, note: str) -> None:
        """Record why the project at ``root`` was not indexed on first use (the CLI's own try).

        A turn of this process then tells ``note`` for RECHECK_S instead of walking the
        project again: a command on a project too large to index would otherwise walk it
        twice, once before the graph and once in it.
        """
        with self._lock:
            if not self.running(root):
                self._attempts[root] = _Attempt(time.monotonic(), note=note)

    def note_for(self, context: Context, on_done: Callable[[], None]) -> str:
        """Start indexing the project in the background if it may be; return the turn's note.

        Args:
            context: Run settings of the turn that found no index.
            on_done: Called in the build's thread once it ends, indexed or not (the caller
                forgets the index it failed to open, so the next turn opens the new one).

        Raises:
            ConfigError: ``ENGRAM_AUTO_INDEX`` is neither off nor a number of files.
        """
        limit = auto_index_limit()
        if not limit:
            return ""
        root = context.project_path
        with self._lock:
            attempt = self._attempts.get(root)
            if attempt is not None:
                if self.running(root):
                    return BUILDING
                if attempt.note and time.monotonic() - attempt.started < RECHECK_S:
                    return attempt.note
            first = plan_first_use(root, limit)
            if first.too_large:
                note = too_large_note(first, limit)
                self._attempts[root] = _Attempt(time.monotonic(), note=note)
                return note
            attempt = _Attempt(time.monotonic(), files=first.files)
            attempt.thread = threading.Thread(
                target=self._build,
                args=(context, first, attempt, on_done),
                name=f"engram-first-index-{root.name}",
                daemon=True,
            )
            self._attempts[root] = attempt
            attempt.thread.start()
        return (
            f"no code index yet: indexing its {first.files:,} file{'' if first.files == 1 else 's'}"
            " in the background, once "
            f"({AUTO_INDEX_VARIABLE}=off turns this off)"
        )

    @staticmethod
    def _build(
        context: Context, first: FirstUse, attempt: _Attempt, on_done: Callable[[], None]
    ) -> None:
        import logging

        from engram.graph.retrieval._index_build import update_indexes
        from engram.stores import mask_url_passwords

        log = logging.getLogger(__name__)
        try:
            run = update_indexes(context, walk=first.walk)
            log.info(
                "indexed %s on first use: %d files, %d chunks in %.1fs",
                context.project_path,
                run.stats.files,
                run.stats.chunks,
                run.summary["seconds_total"],
            )
        except Exception as exc:  # noqa: BLE001 - a thread's last word: kept for the turns
            why = mask_url_passwords(str(exc) or type(exc).__name__)
            attempt.note = build_failed_note(why)
            log.warning("first-use index of %s failed: %s", context.project_path, why)
        finally:
            on_done()


FIRST_USE = BackgroundIndexing()
"""The process's first-use builds: every graph of a process (a server runs one per
assistant, ``build_pack`` one per call) sees the same build of a project under way."""


def shared_first_use() -> BackgroundIndexing:
    """Return the process's first-use builds (``Deps.first_use``'s default)."""
    return FIRST_USE
