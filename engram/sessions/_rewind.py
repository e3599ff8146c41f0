"""Rewind a session's files and conversation to a checkpoint, and undo its last change.

Shared by ``engram sessions rewind`` and the chat's ``/rewind`` and ``/undo``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engram.graph import LAST_NODE, SessionError
from engram.stores.snapshots import (
    UNDO_TOOL,
    SnapshotLog,
    SnapshotRecord,
    apply_rewind,
    code_at,
    kept_at,
    live_changes,
    new_record,
    open_trees,
    plan_rewind,
)

if TYPE_CHECKING:
    from engram.sessions._app import App

REWIND_TOOL = "rewind"
REFUSED_TOOL = "rewind-refused"
"""``tool`` of the record a refused rewind or undo logs (it changed nothing)."""


@dataclass
class RewindOutcome:
    """What a rewind or undo did."""

    thread_id: str
    checkpoint_id: str | None
    """The checkpoint rewound to; None for the start of the session."""
    files: list[str] = field(default_factory=list)
    """Files written back or deleted."""
    held: list[str] = field(default_factory=list)
    """Files a command changed that were left as they are (they may hold the user's edits made
    while it ran); ``force`` restores them."""
    conversation_checkpoint: str | None = None
    """The new head of the session (a copy of the target checkpoint), when it was rewound."""

    def as_json(self) -> dict[str, Any]:
        """Return the outcome for ``--json``."""
        return {
            "thread_id": self.thread_id,
            "to": self.checkpoint_id or "start",
            "files": self.files,
            "held": self.held,
            "conversation_checkpoint": self.conversation_checkpoint,
        }


def _ancestry(saver: Any, thread_id: str, checkpoint_id: str) -> list[str]:
    """Return the checkpoint's id and its ancestors' ids, nearest first."""
    chain: list[str] = []
    config: Any = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
    while config is not None:
        item = saver.get_tuple(config)
        if item is None:
            break
        chain.append(item.config["configurable"]["checkpoint_id"])
        config = item.parent_config
    return chain


def _restore(
    engram: App,
    thread_id: str,
    target: str,
    records: list[SnapshotRecord],
    tool: str,
    *,
    force: bool,
    kept: int | None = None,
    whole: set[str] | None = None,
) -> tuple[list[str], list[str]]:
    """Put back the files the session changed since ``target``; log it as a rewind.

    Returns:
        The files written back or deleted, and the held files left as they are.

    Raises:
        SessionError: The user changed files the rewind would overwrite, or (``whole``: an
            undo, which reverts one step entirely or not at all) a command changed some.
    """
    root = engram.context.project_path
    state = engram.context.state
    trees = open_trees(root, state)
    plan = plan_rewind(trees, target, records[-1].after, records)
    own_held = plan.held & (whole or set())
    if own_held and not force:
        SnapshotLog(state).append(
            new_record(thread_id, None, "rewind", REFUSED_TOOL, plan.current, plan.current, set())
        )
        raise SessionError(
            f"a command changed {', '.join(sorted(own_held))}; what they hold may include "
            "edits made while it ran (engram cannot tell the two apart), so nothing was undone",
            hint="/undo --force reverts them anyway",
        )
    if plan.conflicts and not force:
        names = ", ".join(sorted(plan.conflicts))
        SnapshotLog(state).append(
            new_record(thread_id, None, "rewind", REFUSED_TOOL, plan.current, plan.current, set())
        )
        links = (
            f" ({', '.join(sorted(plan.links))}: now a link or not a file)" if plan.links else ""
        )
        raise SessionError(
            f"changed outside this session's steps: {names}{links}; rewinding would "
            "overwrite those changes, so nothing was rewound",
            hint="commit or copy your changes, or "
            "pass --force (/rewind … --force) to overwrite them (links are never followed)",
        )
    try:
        written = apply_rewind(root, trees, plan, force=force)
    except OSError as exc:
        SnapshotLog(state).append(
            new_record(thread_id, None, "rewind", REFUSED_TOOL, plan.current, plan.current, set())
        )
        raise SessionError(
            f"the rewind stopped: {exc.strerror or exc}; the files it had written were put back",
            hint="check the file named, then run the rewind again",
        ) from None
    after = trees.snapshot()
    SnapshotLog(state).append(
        new_record(thread_id, None, "rewind", tool, plan.current, after, set(written), kept=kept)
    )
    return written, [] if force else sorted(plan.held)


def _records(engram: App, thread_id: str) -> list[SnapshotRecord]:
    """Return the session's snapshot records, leaving out refused rewinds.

    They changed nothing, and their trees hold the user's own changes, not engram's.
    """
    records = SnapshotLog(engram.context.state).records(thread_id)
    return [r for r in records if r.tool != REFUSED_TOOL]


def _first_checkpoint(saver: Any, thread_id: str) -> dict[str, Any]:
    items = list(saver.list({"configurable": {"thread_id": thread_id}}))
    if not items:
        raise SessionError(f"session {thread_id} has no checkpoints")
    return items[-1].config  # newest first: the last is the input before the first turn


def rewind_session(
    engram: App,
    thread_id: str,
    checkpoint_id: str | None,
    *,
    code: bool,
    conversation: bool,
    force: bool,
) -> RewindOutcome:
    """Rewind files and/or conversation to a checkpoint (None: before the first turn).

    The files are checked and restored first, so a refusal leaves the conversation as it was.

    Raises:
        SessionError: The user changed files the rewind would overwrite (and not ``force``).
    """
    outcome = RewindOutcome(thread_id, checkpoint_id)
    saver = engram.checkpointer
    if code:
        records = _records(engram, thread_id)
        ancestry = None if checkpoint_id is None else _ancestry(saver, thread_id, checkpoint_id)
        target = code_at(records, ancestry)
        if target is not None:
            outcome.files, outcome.held = _restore(
                engram,
                thread_id,
                target,
                records,
                REWIND_TOOL,
                force=force,
                kept=kept_at(live_changes(records), ancestry),
            )
    if conversation:
        config = (
            _first_checkpoint(saver, thread_id)
            if checkpoint_id is None
            else {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": "",
                    "checkpoint_id": checkpoint_id,
                }
            }
        )
        head = engram.graph.update_state(config, None, as_node="__copy__")
        if checkpoint_id is None:  # the first checkpoint still holds the first request
            head = engram.graph.update_state(head, None, as_node=LAST_NODE)
        outcome.conversation_checkpoint = head["configurable"]["checkpoint_id"]
    return outcome


def undo_last_change(engram: App, thread_id: str, *, force: bool = False) -> SnapshotRecord:
    """Revert the session's newest change still in effect; return its record.

    A change already undone, or rewound away by ``/rewind``, is not undone again: after a
    rewind, undo goes on from the changes the rewind kept.

    Raises:
        SessionError: Nothing is left to undo, or the user changed the files since.
    """
    records = _records(engram, thread_id)
    live = live_changes(records)
    if not live:
        raise SessionError(
            "no change of this session is left to undo", hint="/rewind CHECKPOINT goes further back"
        )
    record = live[-1]
    _restore(
        engram, thread_id, record.before, records, UNDO_TOOL, force=force, whole=set(record.paths)
    )
    return record


def last_turn_start(engram: App, thread_id: str) -> str:
    """Return the checkpoint that ended the turn before the last one (``start`` if none)."""
    saver = engram.checkpointer
    head = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if head is None:
        raise SessionError(f"session {thread_id} has no checkpoints yet", hint="")
    chain = _ancestry(saver, thread_id, head.config["configurable"]["checkpoint_id"])
    for index, checkpoint in enumerate(chain):
        item = saver.get_tuple(
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": "",
                    "checkpoint_id": checkpoint,
                }
            }
        )
        if item is not None and (item.metadata or {}).get("source") == "input":
            return chain[index + 1] if index + 1 < len(chain) else "start"
    return "start"
