"""Rewind a project's files to a snapshot, refusing to overwrite the user's own changes.

Covers which tree a checkpoint stands for, what to restore, which files the user changed
since, and the restore itself.

The code at a checkpoint is read from the session's snapshot log along the checkpoint's
ancestry: an action that ran *from* the checkpoint gives its ``before`` tree, the nearest
earlier action its ``after`` tree. Only the files the session changed between the target and
the tree engram last wrote are restored; a file the user changed since that last tree is a
conflict, restored only when forced. A file a command changed is *held*: the user may have
edited it while the command ran, and nothing tells the command's writes from theirs, so it too
is restored only when forced (and listed as kept otherwise).
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from engram.stores.files import (
    UnsafeFileError,
    confine,
    read_regular,
    within_time_limit,
    write_atomically,
)
from engram.stores.snapshots._log import VERIFY_TOOL, SnapshotRecord
from engram.stores.snapshots._trees import EXECUTABLE, REGULAR, FileEntry, TreeStore, changed_paths

UNDO_TOOL = "undo"
"""``tool`` of the rewind records an undo logs."""


def live_changes(records: Sequence[SnapshotRecord]) -> list[SnapshotRecord]:
    """Return the session's changes still in effect, oldest first (what undo may revert).

    An undo takes back the newest of them; a rewind keeps those it recorded as ``kept``.
    """
    live: list[SnapshotRecord] = []
    for record in records:
        if record.kind != "rewind":
            # the checks' own leftovers (caches, build output) are no change of the model's
            if record.paths and record.tool != VERIFY_TOOL:
                live.append(record)
        elif record.tool == UNDO_TOOL:
            del live[-1:]
        elif record.kept is not None:
            del live[record.kept :]
    return live


def kept_at(live: Sequence[SnapshotRecord], ancestry: Sequence[str] | None) -> int:
    """Return how many of the ``live`` changes a rewind to a checkpoint keeps in effect.

    Those that ran from the checkpoint's ancestors stay; one that ran from the checkpoint
    itself or later is undone by the rewind (see ``code_at``). None: the session's start.
    """
    ancestors = set((ancestry or ())[1:])
    kept = 0
    for record in live:
        if record.checkpoint_id not in ancestors:
            break
        kept += 1
    return kept


def code_at(records: Sequence[SnapshotRecord], ancestry: Sequence[str] | None) -> str | None:
    """Return the tree the project had at a checkpoint; None when the session changed nothing.

    Args:
        records: The session's snapshot log, oldest first.
        ancestry: The checkpoint id followed by its ancestors' ids, nearest first; None
            for the start of the session (before its first turn).
    """
    actions = [r for r in records if r.kind != "rewind"]
    if not actions:
        return None
    for position, checkpoint in enumerate(ancestry or ()):
        here = [r for r in actions if r.checkpoint_id == checkpoint]
        if here:
            return here[0].before if position == 0 else here[-1].after
    return actions[0].before


@dataclass(frozen=True)
class RewindPlan:
    """What a rewind would change."""

    target: dict[str, FileEntry]
    current: str
    """The tree as it is now (the ``before`` of the rewind's own record)."""
    paths: frozenset[str]
    """Files the session changed between the target and the tree engram last wrote."""
    conflicts: frozenset[str]
    """Of those, the files the user changed outside engram's steps (between two turns, or
    after engram last wrote them), or that are now links or not regular files."""
    links: frozenset[str] = frozenset()
    """Of the conflicts, the paths that are links or not regular files: never written, even
    when forced."""
    held: frozenset[str] = frozenset()
    """Of the paths (conflicts aside), the files a command or the checks changed in the steps
    being undone: what they hold may be the user's edit made while the command ran, so they
    are restored only when forced."""

    def restored(self, *, force: bool) -> frozenset[str]:
        """Return the paths a rewind writes back or deletes (links never)."""
        if force:
            return self.paths - self.links
        return self.paths - self.conflicts - self.held


def plan_rewind(
    trees: TreeStore, target: str, last: str, records: Sequence[SnapshotRecord] = ()
) -> RewindPlan:
    """Compare the target, every step engram took since and the project as it is now.

    ``records`` are the session's snapshot records, oldest first: a file that differs between
    one step's ``after`` and the next step's ``before`` was changed by someone else in between
    (the user, between two turns); so was one that differs between ``last`` and now.
    """
    current = trees.snapshot()
    target_files, last_files = trees.files(target), trees.files(last)
    current_files = last_files if current == last else trees.files(current)
    paths = changed_paths(target_files, last_files)
    user_changed = changed_paths(last_files, current_files)
    for earlier, later in _gaps(records, target):
        if earlier != later:
            user_changed |= changed_paths(trees.files(earlier), trees.files(later))
    # A file the user already put back to the target's content is no conflict.
    unlike_target = {p for p in paths if current_files.get(p) != target_files.get(p)}
    conflicts = paths & user_changed & unlike_target
    root = getattr(trees, "root", None)
    links = {p for p in paths if root is not None and _not_plain(Path(root) / p)}
    by_commands = {p for r in _steps_after(records, target) if r.kind == "command" for p in r.paths}
    held = (paths & by_commands & unlike_target) - conflicts - links
    return RewindPlan(
        target_files,
        current,
        frozenset(paths),
        frozenset(conflicts | links),
        frozenset(links),
        frozenset(held),
    )


def _steps_after(records: Sequence[SnapshotRecord], target: str) -> list[SnapshotRecord]:
    """Return the records after ``target`` (the steps a rewind to it undoes), oldest first."""
    start = 0
    for index, record in enumerate(records):
        if record.after == target:
            start = index + 1
    if start == 0:
        start = next((i for i, r in enumerate(records) if r.before == target), 0)
    return list(records[start:])


def _gaps(records: Sequence[SnapshotRecord], target: str) -> list[tuple[str, str]]:
    """Return (one step's after, the next step's before) for the steps after ``target``."""
    steps = _steps_after(records, target)
    return [(a.after, b.before) for a, b in zip(steps, steps[1:], strict=False)]


def _not_plain(path: Path) -> bool:
    """Return True for a path that is a link or exists as something other than a file."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(info.st_mode)


def apply_rewind(
    root: Path, trees: TreeStore, plan: RewindPlan, *, force: bool = False
) -> list[str]:
    """Write back each planned file as the target holds it (deleting those it lacks).

    All or nothing: every object and every current file is read (the objects checked against
    their ids) before anything is written, and a write that fails puts back the files already
    written. A link or a non-regular file is never read, written through or deleted
    (``plan.links``), even when forced; without ``force`` the conflicts and the held files stay
    as they are. Each file operation has a time limit (:data:`FILE_OP_SECONDS`).

    Returns:
        The paths whose content changed on disk.

    Raises:
        OSError: A read or write failed or timed out (the files written before it are as
            they were; after a time-out, as far as the hung file system lets them be).
    """
    wanted: list[tuple[str, Path, bytes | None, int]] = []
    saved: dict[str, bytes | None] = {}
    for path in sorted(plan.restored(force=force)):
        target = confine(root, path)
        entry = plan.target.get(path)
        now = within_time_limit(f"reading {path}", partial(_current, target))
        if entry is None:
            if now is not None:
                wanted.append((path, target, None, REGULAR))
                saved[path] = now[0]
            continue
        stored = trees.read(entry)
        mode = EXECUTABLE if entry.executable else REGULAR
        if now is not None and now == (stored, entry.executable):
            continue
        wanted.append((path, target, stored, mode))
        saved[path] = None if now is None else now[0]
    written: list[tuple[str, Path]] = []
    try:
        for path, target, data, mode in wanted:
            within_time_limit(f"writing {path}", partial(_put, root, target, data, mode))
            written.append((path, target))
    except OSError:
        for path, target in reversed(written):
            old = saved[path]
            within_time_limit(f"putting back {path}", partial(_put, root, target, old, REGULAR))
        raise
    return [path for path, _ in written]


def _current(target: Path) -> tuple[bytes, bool] | None:
    """Return a file's content and executable bit; None when nothing is there.

    Raises:
        UnsafeFileError: The path is now a link, FIFO, device or hard-linked file.
    """
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFileError(f"{target.name!r} is now a link; links are never followed")
    return read_regular(target), bool(info.st_mode & 0o100)


def _put(root: Path, target: Path, data: bytes | None, mode: int) -> None:
    if data is None:
        target.unlink(missing_ok=True)
        _prune_empty(root, target.parent)
    else:
        write_atomically(target, data, mode=mode)


def _prune_empty(root: Path, folder: Path) -> None:
    """Remove folders left empty by a deletion, up to (not including) the project root."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
