"""The sessions of a checkpointer, newest first, without loading every checkpoint.

``BaseCheckpointSaver.list`` deserializes each checkpoint with its pending writes; listing
sessions only needs each thread's latest checkpoint id, its metadata and a count. On SQLite
those come from one query over the saver's own table; other savers take the generic path.
A checkpoint id is a time-ordered UUIDv6, so the latest id also says when the thread was
last updated.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

__all__ = ["checkpoint_time", "generic_session_rows", "session_rows"]

UUID_EPOCH_OFFSET = 0x01B21DD213814000
"""100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch."""

_LATEST_SQL = """
SELECT c.thread_id, c.checkpoint_id, c.metadata, t.n
FROM checkpoints AS c
JOIN (SELECT thread_id, MAX(checkpoint_id) AS last, COUNT(*) AS n
      FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS t
  ON c.thread_id = t.thread_id AND c.checkpoint_id = t.last
WHERE c.checkpoint_ns = ''
"""


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


def session_rows(saver: BaseCheckpointSaver[Any], project: str | None) -> list[dict[str, Any]]:
    """Return one row per thread (of ``project``, or all when None), newest first."""
    rows = _sqlite_rows(saver) if isinstance(saver, SqliteSaver) else generic_session_rows(saver)
    if project is not None:
        rows = [row for row in rows if row["project"] == project]
    return sorted(rows, key=lambda r: r["checkpoint_id"], reverse=True)


def _row(thread_id: str, checkpoint_id: str, meta: dict[str, Any], count: int) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "checkpoint_id": checkpoint_id,
        "updated": checkpoint_time(checkpoint_id),
        "title": meta.get("title", ""),
        "project": meta.get("project", ""),
        "step": meta.get("step"),
        "checkpoints": count,
    }


def _sqlite_rows(saver: SqliteSaver) -> list[dict[str, Any]]:
    with saver.cursor(transaction=False) as cur:
        cur.execute(_LATEST_SQL)
        found = cur.fetchall()
    rows = []
    for thread_id, checkpoint_id, metadata, count in found:
        meta = json.loads(metadata) if metadata else {}
        rows.append(_row(str(thread_id), str(checkpoint_id), dict(meta), int(count)))
    return rows


def generic_session_rows(saver: BaseCheckpointSaver[Any]) -> list[dict[str, Any]]:
    """Return one row per thread by walking every checkpoint (any saver; unordered)."""
    latest: dict[str, tuple[str, dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    for item in saver.list(None):
        configurable = item.config["configurable"]
        if configurable.get("checkpoint_ns", ""):
            continue
        thread_id = str(configurable["thread_id"])
        checkpoint_id = str(configurable["checkpoint_id"])
        counts[thread_id] = counts.get(thread_id, 0) + 1
        if thread_id not in latest or checkpoint_id > latest[thread_id][0]:
            latest[thread_id] = (checkpoint_id, dict(item.metadata or {}))
    return [_row(t, c, meta, counts[t]) for t, (c, meta) in latest.items()]
