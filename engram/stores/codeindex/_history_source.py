"""The code index's view of the checkout's history: refreshed with the index, read once per HEAD."""

from __future__ import annotations

import logging
from pathlib import Path

from engram.stores.codeindex._history_cache import Stamp, history_stamp, load_tables, save_tables
from engram.stores.codeindex._history_evidence import HistoryTables
from engram.stores.history import History, load_history, refresh_history

log = logging.getLogger(__name__)


class IndexHistory:
    """The mined history of one project, stored in its index folder.

    ``refresh`` runs with every index update (only new commits are read); searches read the
    stored file's ranking tables (stored beside it by the first search that built them) and
    keep them until the file changes.
    """

    def __init__(self, root: Path, folder: Path) -> None:
        self.root = root
        self.folder = folder
        self._tables: tuple[Stamp | None, HistoryTables | None, str] | None = None
        self.last: History | None = None
        """What the last ``refresh`` found (None before one)."""

    def refresh(self) -> History:
        """Bring the stored history up to date with HEAD (never raises for git's failures)."""
        history = refresh_history(self.root, self.folder, stored=self.last)
        self.last = history
        if history.note:
            log.info("engram: history: %s", history.note)
        return history

    def tables(self) -> HistoryTables | None:
        """Return the history's ranking tables, None when there is no usable history."""
        return self._current()[1]

    def note(self) -> str:
        """Return why the history is missing or partial, or "" (not mined yet says so too)."""
        return self._current()[2]

    def _current(self) -> tuple[Stamp | None, HistoryTables | None, str]:
        from engram.stores.history import HISTORY_FILE

        stamp = history_stamp(self.folder / HISTORY_FILE)
        if self._tables is not None and self._tables[0] == stamp:
            return self._tables
        if stamp is None:
            self._tables = (None, None, "history not mined yet: run `engram index`")
            return self._tables
        stored = load_tables(self.folder, stamp)
        if stored is not None:
            self._tables = (stamp, *stored)
            return self._tables
        history = load_history(self.folder)
        if history is None:
            self._tables = (stamp, None, "history not mined yet: run `engram index`")
        elif not history.usable:
            self._tables = (stamp, None, history.note)
        else:
            tables = HistoryTables.build(history)
            save_tables(self.folder, stamp, tables, history.note)
            self._tables = (stamp, tables, history.note)
        return self._tables
