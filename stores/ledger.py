"""Append-only JSONL audit ledger: one file per session thread in ``<project>/.engram/ledger``."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from engram.stores.project_dir import make_private_dir

__all__ = ["Ledger", "message_record"]

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def message_record(message: BaseMessage) -> dict[str, Any]:
    """Return a JSON-ready record of a message, tool calls included."""
    record: dict[str, Any] = {
        "id": message.id,
        "role": message.type,
        "content": message.content,
    }
    for attr in ("tool_calls", "tool_call_id", "name", "status"):
        value = getattr(message, attr, None)
        if value:
            record[attr] = value
    return record


class Ledger:
    """Append-only event log for one project's sessions."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_project(cls, project: Path) -> Ledger:
        """Return the ledger kept in the project's ``.engram/ledger`` folder."""
        return cls(project / ".engram" / "ledger")

    def path(self, thread_id: str) -> Path:
        """Return the JSONL file of a thread."""
        return self.folder / f"{_SAFE_ID.sub('_', thread_id) or 'default'}.jsonl"

    def append(self, thread_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Append one event; each event is one line written with a single ``write`` call."""
        make_private_dir(self.folder)
        event = {"ts": datetime.now(UTC).isoformat(), "kind": kind, **data}
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        fd = os.open(self.path(thread_id), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def append_messages(self, thread_id: str, messages: list[BaseMessage]) -> None:
        """Record messages as ``message`` events."""
        for message in messages:
            self.append(thread_id, "message", message_record(message))

    def read(self, thread_id: str) -> Iterator[dict[str, Any]]:
        """Yield the events of a thread in order, skipping a torn last line after a crash."""
        try:
            handle = self.path(thread_id).open(encoding="utf-8")
        except FileNotFoundError:
            return
        with handle:
            for line in handle:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue
