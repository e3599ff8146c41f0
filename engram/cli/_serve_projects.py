"""The warm server's open projects: their indexes kept across commands, and kept current.

Each project's code index and relation index stay open between commands (the
``ResourceKeeper`` the openers ask, ``engram.graph._warm_resources``). Before one is lent again
it is checked against the disk: the project folder must still be the same folder (a deleted,
moved or replaced project is dropped, never answered from), and the index files must be the
ones it was opened on (another process's ``engram index`` makes it reopen).

A code index kept open is followed with ``watchfiles``: a change under the project runs the
index's incremental update (the same walk, ignore rules and access policy as ``engram
index``) after a short quiet period, so a saved file is searchable about a second later.
Until then search and the pack say the file changed since the last index, as they do anywhere.

The watcher follows the project's own folders one by one and never a link: a recursive watch
would follow a link the repository ships (``data -> /``) and put every folder it reaches under
watch, exhausting the user's inotify watches and updating the index on changes outside the
project. A new folder is taken in when it appears; a tree with more than
``MAX_WATCHED_FOLDERS`` folders is not followed (commands still say when a file changed).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from engram.graph import Context
from engram.graph._warm_resources import WARM_RESOURCES, KeptName
from engram.stores import StoreError
from engram.stores.files import is_skipped_dir

log = logging.getLogger("engram.serve")

T = TypeVar("T")
DEBOUNCE_MS = 400
"""Longest wait gathering a burst of changes into one update."""
QUIET_MS = 50
"""A burst ends after this long without a change."""

CATCH_UP_MS = 500
"""After the folders are listed again, an update runs once this long passes with no change, so a
file written into a new folder before its watch existed is not missed."""
MAX_WATCHED_FOLDERS = 20_000
"""Folders of one project the watcher follows at most."""

Key = tuple[str, ...]
MAX_PROJECTS = 8
"""Projects held open at once; the least recently used one is closed to open another."""


@dataclass
class Kept:
    """One open resource and what it was opened on."""

    value: Any
    root: Path
    folder_id: tuple[int, int]
    stamp: tuple[object, ...]
    stop: threading.Event = field(default_factory=threading.Event)
    used: int = 0
    """When a command last asked for it (the server's count of lends)."""


def folder_identity(path: Path) -> tuple[int, int]:
    """Return the (device, inode) of a folder; raises OSError when it is gone."""
    info = os.stat(path)
    return info.st_dev, info.st_ino


class WarmProjects:
    """Every project's kept indexes (a ``ResourceKeeper``), their checks and their watchers."""

    def __init__(self) -> None:
        self._kept: dict[Key, Kept] = {}
        self._lock = threading.RLock()
        self._lends = 0
        self.updates = 0
        """Watcher updates run (for ``engram serve --status``)."""
        self._relations_due: dict[Path, tuple[Any, Any]] = {}
        """Per project root, the walk and parsed facts of code-index updates the relation
        index has not had yet."""

    def keep(self, name: KeptName, context: Context, opener: Callable[[Context], T]) -> T:
        """Return the project's open ``name``, reopening it if the disk changed under it."""
        key = _key(name, context)
        with self._lock:
            self._lends += 1
            kept = self._kept.get(key)
            if kept is not None and self._current(name, context, kept):
                kept.used = self._lends
                if name == "relation_index":
                    self._catch_up_relations(context, kept)
                return cast("T", kept.value)
            if kept is not None:
                self._drop_stale(name)
            value = opener(context)
            root = context.project_path
            kept = Kept(value, root, folder_identity(root), _stamp(name, context, value))
            kept.used = self._lends
            self._kept[key] = kept
            if name == "relation_index":
                self._catch_up_relations(context, kept)
            self._close_least_used()
            if name == "code_index":
                self._follow(kept, context)
            elif _key("code_index", context) not in self._kept:
                self._keep_code_index(context)
            return value

    def _keep_code_index(self, context: Context) -> None:
        """Keep the project's code index too, so that its watcher follows the project.

        The watcher is the code index's: it updates the code index from each change and
        hands the relation index the same walk and parsed trees. A project a command opened
        only the relation index of (``engram graph``, ``engram slice``) is followed as well;
        one never indexed (no code index to keep) is not.
        """
        from engram.graph.retrieval import open_project_index

        token = WARM_RESOURCES.set(self)  # the opener asks this keeper, which keeps it
        try:
            open_project_index(context)
        except (OSError, StoreError) as exc:
            log.info("engram serve: not following %s: %s", context.project_path, exc)
        finally:
            WARM_RESOURCES.reset(token)

    def _close_least_used(self) -> None:
        """Close the least recently used projects beyond ``MAX_PROJECTS`` (a server's memory)."""
        last_use: dict[Path, int] = {}
        for kept in self._kept.values():
            last_use[kept.root] = max(last_use.get(kept.root, 0), kept.used)
        for root in sorted(last_use, key=last_use.__getitem__)[:-MAX_PROJECTS]:
            for key in [k for k, kept in self._kept.items() if kept.root == root]:
                self._drop(key)

    def forget_missing(self) -> None:
        """Drop projects whose folder is gone or is another folder now."""
        with self._lock:
            for key, kept in list(self._kept.items()):
                try:
                    same = folder_identity(kept.root) == kept.folder_id
                except OSError:
                    same = False
                if not same:
                    self._drop(key)

    def projects(self) -> list[str]:
        """Return the roots of the projects held open."""
        with self._lock:
            return sorted({str(kept.root) for kept in self._kept.values()})

    def close(self) -> None:
        """Stop every watcher and close every index."""
        with self._lock:
            for key in list(self._kept):
                self._drop(key)

    def _current(self, name: KeptName, context: Context, kept: Kept) -> bool:
        try:
            if folder_identity(kept.root) != kept.folder_id:
                return False
            if getattr(kept.value, "degraded", False):
                return False  # opened while a server was down: try it again
            return _stamp(name, context, kept.value) == kept.stamp
        except (OSError, StoreError):
            return False

    def _drop_stale(self, name: KeptName) -> None:
        """Drop a changed resource; for a code index, every code index (shared Chroma clients)."""
        for key in [k for k in self._kept if k[0] == name]:
            self._drop(key)
        if name == "code_index":
            from engram.stores.codeindex import release_embedded_chroma

            release_embedded_chroma()

    def _drop(self, key: Key) -> None:
        kept = self._kept.pop(key)
        kept.stop.set()
        close = getattr(kept.value, "close", None)
        if callable(close):
            try:
                close()
            except (OSError, StoreError) as exc:
                log.warning("engram serve: closing the index of %s: %s", kept.root, exc)

    def _follow(self, kept: Kept, context: Context) -> None:
        thread = threading.Thread(
            target=self._watch,
            args=(kept, context),
            name=f"watch {kept.root}",
            daemon=True,
        )
        thread.start()

    def _watch(self, kept: Kept, context: Context) -> None:
        """Update the kept code index after each burst of changes, until it is dropped."""
        from watchfiles import DefaultFilter, watch

        home = str(context.home_path)
        default = DefaultFilter()

        def relevant(change: Any, path: str) -> bool:
            return default(change, path) and not path.startswith(home)

        catch_up = False
        try:
            while not kept.stop.is_set():
                folders = watched_folders(kept.root, home)
                if folders is None:
                    log.warning(
                        "engram serve: %s has more than %d folders; not following its changes",
                        kept.root,
                        MAX_WATCHED_FOLDERS,
                    )
                    return
                for changes in watch(
                    *folders,
                    watch_filter=relevant,
                    debounce=DEBOUNCE_MS,
                    step=QUIET_MS,
                    stop_event=kept.stop,
                    raise_interrupt=False,
                    recursive=False,
                    rust_timeout=CATCH_UP_MS,
                    yield_on_timeout=True,
                ):
                    if not changes and not catch_up:
                        continue
                    catch_up = False
                    with self._lock:
                        if kept.stop.is_set():
                            return
                        self._update(kept, context)
                    if _new_folder(changes, folders):
                        catch_up = True
                        break  # list the folders again, the new one with them
                else:
                    return  # stopped
        except (OSError, RuntimeError) as exc:  # the folder went away, or inotify ran out
            log.warning("engram serve: stopped following %s: %s", kept.root, exc)

    def _update(self, kept: Kept, context: Context) -> None:
        """Update the kept code index from one walk; leave the relation index its share.

        The relation index is brought up to date when a command next asks for it, on the
        command's thread (it is not safe to change under a running command), from the same
        walk and the facts of the trees the chunker parsed (so no file is parsed twice).
        """
        from engram.stores.codeindex import walk_for_index
        from engram.stores.relations import SharedFacts

        shared = SharedFacts()
        try:
            walk = walk_for_index(kept.root, kept.value.manifest)
            kept.value.update(walk=walk, on_tree=shared.record)
            kept.stamp = _stamp("code_index", context, kept.value)
            self.updates += 1
        except (OSError, StoreError) as exc:
            log.warning("engram serve: updating the index of %s: %s", kept.root, exc)
            return
        earlier = self._relations_due.get(kept.root)
        if earlier is not None:  # not lent since: its facts still count where unchanged
            shared.adopt(earlier[1])
        self._relations_due[kept.root] = (walk, shared)

    def _catch_up_relations(self, context: Context, kept: Kept) -> None:
        """Apply the watcher's pending update to the kept relation index, in place, and save."""
        due = self._relations_due.pop(kept.root, None)
        if due is None:
            return
        from engram.stores.relations import refresh_relation_index

        walk, shared = due
        try:
            refresh_relation_index(
                kept.root, context.state, files=walk.files, shared=shared, graph=kept.value
            )
            kept.stamp = _stamp("relation_index", context, kept.value)
        except (OSError, StoreError, RuntimeError, ValueError) as exc:
            log.warning("engram serve: updating the relation index of %s: %s", kept.root, exc)


def watched_folders(root: Path, home: str) -> list[str] | None:
    """Return ``root`` and its folders, links never followed, skipped folders and ``home`` left out.

    None when there are more than ``MAX_WATCHED_FOLDERS``.
    """
    found = [str(root)]
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as scan:
                for entry in scan:
                    if (
                        entry.is_dir(follow_symlinks=False)
                        and not is_skipped_dir(entry.name)
                        and entry.path != home
                    ):
                        found.append(entry.path)
                        stack.append(entry.path)
        except OSError:
            continue  # unreadable, or gone since it was listed
        if len(found) > MAX_WATCHED_FOLDERS:
            return None
    return found


def _new_folder(changes: set[tuple[Any, str]], folders: list[str]) -> bool:
    """Return True when a change names a real folder that is not watched yet."""
    known = set(folders)
    return any(
        path not in known
        and not is_skipped_dir(os.path.basename(path))
        and os.path.isdir(path)
        and not os.path.islink(path)
        for _, path in changes
    )


def _key(name: KeptName, context: Context) -> Key:
    """Everything in the run settings that decides what opening ``name`` gives."""
    return (
        name,
        str(context.project_path),
        str(context.home_path),
        context.embedding_provider,
        context.embedding_model,
        context.embedding_url,
        context.chroma_url,
    )


def _stamp(name: KeptName, context: Context, value: Any) -> tuple[object, ...]:
    """Return what changes when another process rewrites the resource's files."""
    if name == "code_index":
        from engram.stores.codeindex import INDEX_DIR

        manifest = os.stat(context.state.path(INDEX_DIR, "manifest.sqlite"))
        return (manifest.st_dev, manifest.st_ino, value.manifest.get_meta("generation"))
    from engram.stores.relations import GRAPH_FILE

    graph = os.stat(context.state.path(*GRAPH_FILE.parts))
    return (graph.st_dev, graph.st_ino, graph.st_size, graph.st_mtime_ns)
