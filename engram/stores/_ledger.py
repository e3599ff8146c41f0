"""Append-only JSONL audit ledger: one file per session thread in the project's state folder.

Events (one JSON object a line, each with ``ts`` and ``kind``): ``message`` (every version of
every message that entered the conversation, with a ``sha`` of its content), ``model_call``
(what one model request held, as references to message versions and a tool-schema set, so
the exact request can be rebuilt without storing the history once per call), ``tools``,
``approval``, ``replay`` and ``fork`` markers with their parent checkpoint, ``compaction``
and ``learned``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from engram.stores.project import private_dir, project_state_dir

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")
SHA_CHARS = 16
"""Hex digits of the content hash that tells versions of one message apart."""
_BODY_FIELDS = ("tool_calls", "tool_call_id", "name", "status")


def _sha(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:SHA_CHARS]


def message_record(message: BaseMessage) -> dict[str, Any]:
    """Return a JSON-ready record of a message, tool calls and content hash included.

    A message without an id (the system prompt) is identified by its role and hash.
    """
    record: dict[str, Any] = {"role": message.type, "content": message.content}
    for attr in _BODY_FIELDS:
        value = getattr(message, attr, None)
        if value:
            record[attr] = value
    sha = _sha(record)
    return {"id": message.id or f"{message.type}-{sha}", "sha": sha, **record}


def version_key(record: Mapping[str, Any]) -> str:
    """Return the key of one message version (``id:sha``)."""
    return f"{record.get('id')}:{record.get('sha')}"


def message_ref(message: BaseMessage) -> str:
    """Return the version key of a message as it is now."""
    return version_key(message_record(message))


class Ledger:
    """Append-only event log for one project's sessions."""

    def __init__(self, folder: Path, base: Path | None = None) -> None:
        self.folder = folder
        self.base = base if base is not None else folder.parent
        """The folder below which no link is followed (``ENGRAM_HOME`` for a project's)."""

    @classmethod
    def for_project(cls, project: Path, home: Path) -> Ledger:
        """Return the project's ledger, kept in its state folder under ``ENGRAM_HOME``."""
        return cls(project_state_dir(project, home) / "ledger", home)

    def path(self, thread_id: str) -> Path:
        """Return the JSONL file of a thread."""
        return self.folder / f"{_SAFE_ID.sub('_', thread_id) or 'default'}.jsonl"

    def append(self, thread_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Append one event; each event is one line written with a single ``write`` call."""
        private_dir(self.folder, self.base)
        event = {"ts": datetime.now(UTC).isoformat(), "kind": kind, **data}
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
        fd = os.open(self.path(thread_id), flags, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def append_messages(self, thread_id: str, messages: Sequence[BaseMessage]) -> int:
        """Record the versions of ``messages`` the thread's ledger does not hold yet.

        Returns:
            How many ``message`` events were appended.
        """
        return self._append_new(thread_id, messages, self.known_versions(thread_id))

    def _append_new(self, thread_id: str, messages: Sequence[BaseMessage], known: set[str]) -> int:
        added = 0
        for message in messages:
            record = message_record(message)
            if version_key(record) not in known:
                known.add(version_key(record))
                self.append(thread_id, "message", record)
                added += 1
        return added

    def known_versions(self, thread_id: str) -> set[str]:
        """Return the version keys of every message (and tool set) recorded for a thread."""
        known: set[str] = set()
        for event in self.read(thread_id):
            if event.get("kind") == "message":
                known.add(version_key(event))
            elif event.get("kind") == "tools":
                known.add(f"tools:{event.get('sha')}")
        return known

    def append_model_call(
        self,
        thread_id: str,
        request: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]],
        **details: Any,
    ) -> None:
        """Record one model request: new message versions and tool set first, then the call."""
        known = self.known_versions(thread_id)
        self._append_new(thread_id, request, known)
        tools_sha = _sha(list(tools))
        if f"tools:{tools_sha}" not in known:
            self.append(thread_id, "tools", {"sha": tools_sha, "tools": list(tools)})
        self.append(
            thread_id,
            "model_call",
            {
                **details,
                "messages": [message_ref(m) for m in request],
                "tools": tools_sha,
            },
        )

    def model_calls(self, thread_id: str) -> list[dict[str, Any]]:
        """Rebuild every recorded model request of a thread, in order.

        Returns:
            One dict per call: its ``model_call`` details, ``messages`` (full records, in the
            order sent) and ``tools`` (the schemas offered).
        """
        versions: dict[str, dict[str, Any]] = {}
        tool_sets: dict[str, list[Any]] = {}
        calls: list[dict[str, Any]] = []
        for event in self.read(thread_id):
            kind = event.get("kind")
            if kind == "message":
                versions[version_key(event)] = {
                    k: v for k, v in event.items() if k not in ("ts", "kind")
                }
            elif kind == "tools":
                tool_sets[str(event.get("sha"))] = list(event.get("tools") or [])
            elif kind == "model_call":
                messages = [
                    versions.get(ref)
                    or {
                        "id": ref,
                        "role": "unknown",
                        "content": "(this version is not in the ledger)",
                    }
                    for ref in event.get("messages", [])
                ]
                calls.append(
                    {
                        **event,
                        "messages": messages,
                        "tools": tool_sets.get(str(event.get("tools")), []),
                    }
                )
        return calls

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
