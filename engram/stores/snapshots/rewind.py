"""Rewind a project's files to a snapshot, refusing to overwrite the user's own changes.

Covers which tree a checkpoint stands for, what to restore, which files the user changed
since, and the restore itself.

The code at a checkpoint is read from the session's snapshot log along the checkpoint's
ancestry: an action that ran *from* the checkpoint gives its ``before`` tree, the nearest
earlier action its ``after`` tree. Only the files the session changed between the target and
the tree engram last wrote are restored; a file the user changed since that last tree is a
conflict, restored only when forced.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.stores.atomic_file import write_atomically
from engram.stores.paths import confine
from engram.stores.snapshots.snapshot_log import VERIFY_TOOL, SnapshotRecord
from engram.stores.snapshots.trees import EXECUTABLE, REGULAR, FileEntry, TreeStore, changed_paths

__all__ = [
    "UNDO_TOOL",
    "RewindPlan",
    "apply_rewind",
    "code_at",
    "kept_at",
    "live_changes",
    "plan_rewind",
]

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
    conflicts = {p for p in paths & user_changed if current_files.get(p) != target_files.get(p)}
    root = getattr(trees, "root", None)
    links = {p for p in paths if root is not None and _not_plain(Path(root) / p)}
    return RewindPlan(
        target_files, current, frozenset(paths), frozenset(conflicts | links), frozenset(links)
    )


def _gaps(records: Sequence[SnapshotRecord], target: str) -> list[tuple[str, str]]:
    """Return (one step's after, the next step's before) for the steps after ``target``."""
    start = 0
    for index, record in enumerate(records):
        if record.after == target:
            start = index + 1
    if start == 0:
        start = next((i for i, r in enumerate(records) if r.before == target), 0)
    steps = list(records[start:])
    return [(a.after, b.before) for a, b in zip(steps, steps[1:], strict=False)]


def _not_plain(path: Path) -> bool:
    """Return True for a path that is a link or exists as something other than a file."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(info.st_mode)


def apply_rewind(root: Path, trees: TreeStore, plan: RewindPlan) -> list[str]:
    """Write back each planned file as the target holds it (deleting those it lacks).

    All or nothing: every object is read (and checked against its id) before anything is
    written, and a write that fails puts back the files already written. A link or a
    non-regular file is never written through or deleted (``plan.links``), even when forced.

    Returns:
        The paths whose content changed on disk.

    Raises:
        OSError: A write failed (the files written before it are as they were).
    """
    wanted: list[tuple[str, Path, bytes | None, int]] = []
    for path in sorted(plan.paths - plan.links):
        target = confine(root, path)
        entry = plan.target.get(path)
        if entry is None:
            if target.is_file():
                wanted.append((path, target, None, REGULAR))
            continue
        stored = trees.read(entry)
        mode = EXECUTABLE if entry.executable else REGULAR
        if (
            target.is_file()
            and target.read_bytes() == stored
            and bool(target.stat().st_mode & 0o100) == entry.executable
        ):
            continue
        wanted.append((path, target, stored, mode))
    saved = {
        path: (target.read_bytes() if target.is_file() else None, target)
        for path, target, _, _ in wanted
    }
    written: list[str] = []
    try:
        for path, target, data, mode in wanted:
            if data is None:
                target.unlink()
                _prune_empty(root, target.parent)
            else:
                write_atomically(target, data, mode=mode)
            written.append(path)
    except OSError:
        for path in reversed(written):
            old, target = saved[path]
            if old is None:
                target.unlink(missing_ok=True)
            else:
                write_atomically(target, old)
        raise
    return written


def _prune_empty(root: Path, folder: Path) -> None:
    """Remove folders left empty by a deletion, up to (not including) the project root."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
