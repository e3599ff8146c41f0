"""The sessions of a checkpointer, newest first, without loading every checkpoint.

``BaseCheckpointSaver.list`` deserializes each checkpoint with its pending writes; listing
sessions only needs each thread's checkpoint ids and a few metadata keys. On SQLite those come
from one query over the saver's own table (the keys read by ``json_extract``); other savers
take the generic path.
A checkpoint id is a time-ordered UUIDv6, so the latest id also says when the thread was
last updated.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

SESSION_KEYS = ("title", "project", "project_id", "forked_from", "fork_checkpoint", "policy")
"""Checkpoint metadata that describes the whole session: kept by every later checkpoint."""
TITLE_CHARS = 120
UUID_EPOCH_OFFSET = 0x01B21DD213814000
"""100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch."""

_META = "json_extract(CAST(metadata AS TEXT), '$.{key}')"
_ALL_SQL = (
    "SELECT thread_id, checkpoint_id, "
    + ", ".join(_META.format(key=k) for k in (*SESSION_KEYS, "step"))
    + " FROM checkpoints WHERE checkpoint_ns = '' {where} ORDER BY thread_id, checkpoint_id"
)


def checkpoint_time(checkpoint_id: str) -> str:
    """Return the ISO time encoded in a UUIDv6 checkpoint id ("" for other ids)."""
    digits = checkpoint_id.replace("-", "")
    if len(digits) != 32 or digits[12] != "6":
        return ""
    try:
        ticks = (int(digits[:12], 16) << 12) | int(digits[13:16], 16)
    except ValueError:
        return ""
    seconds = (ticks - UUID_EPOCH_OFFSET) / 1e7
    return datetime.fromtimestamp(seconds, UTC).isoformat()


Entry = tuple[str, str, dict[str, Any]]
"""(thread id, checkpoint id, metadata) of one top-level checkpoint."""


def _sqlite_entries(saver: SqliteSaver, thread_id: str | None = None) -> list[Entry]:
    where, params = ("AND thread_id = ?", (thread_id,)) if thread_id else ("", ())
    with saver.cursor(transaction=False) as cur:
        cur.execute(_ALL_SQL.format(where=where), params)
        found = cur.fetchall()
    keys = (*SESSION_KEYS, "step")
    return [
        (
            str(row[0]),
            str(row[1]),
            {k: v for k, v in zip(keys, row[2:], strict=True) if v is not None},
        )
        for row in found
    ]


def _generic_entries(saver: BaseCheckpointSaver[Any], thread_id: str | None = None) -> list[Entry]:
    config = {"configurable": {"thread_id": thread_id}} if thread_id else None
    entries = [
        (
            str(item.config["configurable"]["thread_id"]),
            str(item.config["configurable"]["checkpoint_id"]),
            dict(item.metadata or {}),
        )
        for item in saver.list(config)  # type: ignore[arg-type]
        if not item.config["configurable"].get("checkpoint_ns", "")
    ]
    return sorted(entries, key=lambda e: (e[0], e[1]))


def _entries(saver: BaseCheckpointSaver[Any], thread_id: str | None = None) -> list[Entry]:
    if isinstance(saver, SqliteSaver):
        return _sqlite_entries(saver, thread_id)
    return _generic_entries(saver, thread_id)


def _fold(entries: list[Entry]) -> dict[str, dict[str, Any]]:
    """Fold checkpoints (oldest first) into one row per thread.

    Session keys take the newest non-empty value: a checkpoint written without them (by a
    replay of an older version, or by ``graph.invoke`` from Python) does not erase them.
    """
    rows: dict[str, dict[str, Any]] = {}
    for thread_id, checkpoint_id, meta in entries:
        row = rows.setdefault(
            thread_id, {"thread_id": thread_id, "checkpoints": 0, **dict.fromkeys(SESSION_KEYS, "")}
        )
        row["checkpoints"] += 1
        row["checkpoint_id"] = checkpoint_id
        row["updated"] = checkpoint_time(checkpoint_id)
        row["step"] = meta.get("step")
        for key in SESSION_KEYS:
            if meta.get(key):
                row[key] = str(meta[key])
    return rows


def _first_request(saver: BaseCheckpointSaver[Any], thread_id: str) -> str:
    """Return the first user message of a thread's newest checkpoint, as a fallback title."""
    item = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    messages = (item.checkpoint.get("channel_values") or {}).get("messages") if item else None
    for message in messages or []:
        if isinstance(message, HumanMessage):
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else " ".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            )
            return " ".join(text.split())[:TITLE_CHARS]
    return ""


def session_rows(
    saver: BaseCheckpointSaver[Any], project: str | None, project_id: str = ""
) -> list[dict[str, Any]]:
    """Return one row per thread, newest first: every thread in the checkpointer.

    With ``project`` set, threads recorded for another project are left out: a thread is this
    project's when it was recorded at this path or, with ``project_id`` (the memory key of a
    checkout joined to its project), under that identity from any clone. Threads that never
    recorded a project (advanced only through the Python API or the LangGraph server) are
    kept, since nothing says they belong elsewhere.
    """
    rows = list(_fold(_entries(saver)).values())
    if project is not None:
        rows = [
            row
            for row in rows
            if row["project"] in (project, "") or (project_id and row["project_id"] == project_id)
        ]
    for row in rows:
        if not row["title"]:
            row["title"] = _first_request(saver, row["thread_id"])
    return sorted(rows, key=lambda r: r["checkpoint_id"], reverse=True)


def generic_session_rows(saver: BaseCheckpointSaver[Any]) -> list[dict[str, Any]]:
    """Return one row per thread by walking every checkpoint (any saver; unordered)."""
    return list(_fold(_generic_entries(saver)).values())


def session_metadata(saver: BaseCheckpointSaver[Any], thread_id: str) -> dict[str, str]:
    """Return a thread's session keys (title, project, fork origin); empty for a new thread."""
    row = _fold(_entries(saver, thread_id)).get(thread_id)
    return {k: row[k] for k in SESSION_KEYS if row and row[k]}


def thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    """Return the id of every thread in the checkpointer."""
    return sorted({entry[0] for entry in _entries(saver)})


def checkpoint_ids(saver: BaseCheckpointSaver[Any], thread_id: str) -> list[str]:
    """Return the top-level checkpoint ids of one thread, oldest first."""
    return [entry[1] for entry in _entries(saver, thread_id)]
