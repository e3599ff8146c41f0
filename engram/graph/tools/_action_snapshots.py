"""Snapshots of the working tree around each approved edit or command, for rewind and undo."""

from __future__ import annotations

from engram.graph.tools._action_review import action_kind
from engram.stores import StoreError
from engram.stores.files import is_skipped_dir
from engram.stores.project import ProjectState
from engram.stores.snapshots import (
    VERIFY_TOOL,
    RecordKind,
    SnapshotLog,
    TreeStore,
    changed_paths,
    new_record,
    open_trees,
)


class ActionSnapshots:
    """Takes the tree before and after the actions of one tool step and logs them.

    Keyed to the LangGraph checkpoint the step runs from, so rewinding to that checkpoint
    restores the tree its ``before`` recorded. Within a step the ``after`` of one action is
    the ``before`` of the next (nothing else runs between them).
    """

    def __init__(self, state: ProjectState, thread_id: str, checkpoint_id: str | None) -> None:
        """Bind to a project (by its state folder) and the checkpoint the step runs from."""
        self.state = state
        self.root = state.project
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self._trees: TreeStore | None = None
        self._last: str | None = None
        self.notes: list[str] = []
        self.command_changes: list[str] = []
        """Project files the step's commands changed (caches and build folders left out)."""

    def _store(self) -> TreeStore:
        if self._trees is None:
            self._trees = open_trees(self.root, self.state)
        return self._trees

    def before(self) -> str | None:
        """Return the tree as it stands before the next action (None when it failed)."""
        if self._last is None:
            self._last = self._take()
        return self._last

    def after(self, tool: str, before: str | None) -> None:
        """Take the tree after an action and log it with its ``before``."""
        after = self._take()
        self._last = after
        if before is None or after is None:
            return
        trees = self._store()
        paths = set() if before == after else changed_paths(trees.files(before), trees.files(after))
        # an MCP server or the checks, like a command, may change any file: all are commands
        command = tool == VERIFY_TOOL or action_kind(tool) in ("command", "mcp")
        kind: RecordKind = "command" if command else "write"
        if command and tool != VERIFY_TOOL:
            self.command_changes.extend(
                sorted(
                    p for p in paths if not any(is_skipped_dir(part) for part in p.split("/")[:-1])
                )
            )
        try:
            SnapshotLog(self.state).append(
                new_record(self.thread_id, self.checkpoint_id, kind, tool, before, after, paths)
            )
        except OSError as exc:
            self.notes.append(f"snapshot not logged ({exc}); this change cannot be rewound")

    def _take(self) -> str | None:
        try:
            return self._store().snapshot()
        except (StoreError, OSError) as exc:
            self.notes.append(f"snapshot failed ({exc}); this change cannot be rewound")
            return None
