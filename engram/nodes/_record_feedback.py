"""Node ``record_feedback``: after an agent turn, record whether the injected memory was used.

Memory counts as used when the model's tool calls or answer in this turn name an injected
fact or experience id, or a file path that the memory block mentions. One yes/no per task,
per project and task type, feeds the memory weight of the pack budget
(``engram.graph.pack._budget``).
Turns without injected memory record nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State, StateUpdate, content_text
from engram.graph.pack import record_hit
from engram.graph.profile import DEFAULT_TASK_TYPE
from engram.stores import StoreError
from engram.stores.memory import BaseStorePackFeedback, PackFeedbackStore
from engram.stores.project import memory_key

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{2,5})(?![\w/])")
"""A file path or name with an extension (``src/app/core.py``, ``settings.yml``)."""


def injected_markers(memory_report: Mapping[str, Any], memory_block: str) -> set[str]:
    """Return the ids and file paths that identify the memory injected this turn."""
    markers: set[str] = set()
    facts = memory_report.get("facts") or {}
    markers.update(str(i) for i in facts.get("ids", []) if i)
    experience = memory_report.get("experience") or {}
    markers.update(str(item.get("id")) for item in experience.get("injected", []) if item.get("id"))
    markers.update(_PATH.findall(memory_block))
    return markers


def turn_texts(messages: Sequence[AnyMessage]) -> list[str]:
    """Return what the model wrote since the last user message: answers and tool-call args."""
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    texts: list[str] = []
    for message in messages[last_human + 1 :]:
        if not isinstance(message, AIMessage):
            continue
        texts.append(content_text(message.content))
        texts.extend(
            json.dumps(call.get("args", {}), sort_keys=True) for call in message.tool_calls
        )
    return texts


def memory_used(markers: Iterable[str], texts: Iterable[str]) -> bool:
    """Tell whether any marker appears in any text (whole-token match)."""
    joined = "\n".join(texts)
    return any(re.search(rf"(?<![\w]){re.escape(marker)}(?![\w])", joined) for marker in markers)


def record_turn(repo: PackFeedbackStore, key: str, task_type: str, *, used: bool) -> None:
    """Append one task's memory use to the feedback of its project and task type."""
    repo.put(key, task_type, record_hit(repo.get(key, task_type), used))


def record_feedback(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Record whether this turn used the injected memory (no-op when none was injected)."""
    if not state.memory_block:
        return {}
    store = runtime.store if runtime.store is not None else deps.store
    if store is None:
        return {}
    markers = injected_markers(state.memory_report, state.memory_block)
    used = memory_used(markers, turn_texts(state.messages))
    task_type = str(state.task_profile.get("task_type") or DEFAULT_TASK_TYPE)
    key = memory_key(runtime.context.project_path, runtime.context.home_path)
    try:
        record_turn(BaseStorePackFeedback(store), key, task_type, used=used)
    except StoreError as exc:
        return {"notes": [f"memory use not recorded: {exc}"]}
    return {"memory_report": {**state.memory_report, "used": used}}
