"""Export experience memory as Markdown for humans and git, and import it back losslessly.

Layout::

    memory/episodic/<episode id>.md
    memory/patterns/<pattern id>.md
    memory/strategies/strategic-memory.md
    memory/retrieval_config.json

A pattern or episode file opens with front matter (``key: <JSON value>`` lines between ``---``)
for structured fields, then one ``## Label`` section per free-text field. The strategies file
has one ``## <id>`` block per strategy: ``- key: <JSON>`` lines, a blank line, the principle.
Text lines that start with ``#`` or a backslash get one extra leading backslash, so a text can never
be mistaken for a heading; import removes it again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore

from engram.stores.memory._experience_records import (
    Kind,
    Record,
    Strategy,
    record_from_dict,
    record_to_dict,
)
from engram.stores.memory._experience_store import ExperienceStore

MEMORY_DIR = "memory"
FOLDERS: dict[Kind, str] = {"episode": "episodic", "pattern": "patterns", "strategy": "strategies"}
STRATEGY_FILE = "strategic-memory.md"
CONFIG_FILE = "retrieval_config.json"
TEXT_SECTIONS: dict[Kind, tuple[tuple[str, str], ...]] = {
    "pattern": (
        ("name", "Name"),
        ("failure", "Failure manifestation"),
        ("root_cause", "Root cause"),
        ("prevention", "Prevention"),
    ),
    "episode": (("summary", "Summary"), ("lesson", "Lesson"), ("prevention", "Prevention")),
}
FRONT = "---"


@dataclass(frozen=True)
class ExperienceImportReport:
    """What an import read: counts per kind and the retrieval config found, if any."""

    counts: dict[str, int]
    config: dict[str, Any] | None


def _escape(text: str) -> str:
    return "\n".join(
        "\\" + line if line.startswith(("#", "\\")) else line for line in text.split("\n")
    )


def _unescape(text: str) -> str:
    return "\n".join(line[1:] if line.startswith("\\") else line for line in text.split("\n"))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _render_record(record: Record) -> str:
    data = record_to_dict(record)
    sections = TEXT_SECTIONS[record.kind]
    text_fields = {name for name, _ in sections}
    head = [FRONT, f"kind: {json.dumps(record.kind)}"]
    head += [
        f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items() if k not in text_fields
    ]
    title = data[sections[0][0]].split("\n", 1)[0]
    body = [FRONT, "", f"# {record.kind.capitalize()} {record.id}: {_escape(title)}", ""]
    for name, label in sections:
        body.append(f"## {label}\n\n{_escape(data[name])}\n")
    return "\n".join(head + body)


def _parse_record(kind: Kind, text: str, source: Path) -> Record:
    lines = text.split("\n")
    if not lines or lines[0] != FRONT or FRONT not in lines[1:]:
        raise ValueError(f"{source}: missing front matter")
    end = lines.index(FRONT, 1)
    data: dict[str, Any] = {}
    for line in lines[1:end]:
        key, _, value = line.partition(": ")
        data[key.strip()] = json.loads(value)
    labels = {f"## {label}": name for name, label in TEXT_SECTIONS[kind]}
    current: str | None = None
    chunks: dict[str, list[str]] = {}
    for line in lines[end + 1 :]:
        if line in labels:
            current = labels[line]
            chunks[current] = []
        elif current is not None:
            chunks[current].append(line)
    for name, body in chunks.items():
        data[name] = _unescape(_section_text("\n".join(body)))
    data.pop("kind", None)
    return record_from_dict(kind, data)


def _section_text(chunk: str) -> str:
    # Canonical form is "\n<text>\n" (a blank line after the heading and one before the
    # next); a hand-edited file that lost them gets a lenient strip.
    if len(chunk) >= 2 and chunk.startswith("\n") and chunk.endswith("\n"):
        return chunk[1:-1]
    return chunk.strip("\n")


def _render_strategies(strategies: list[Strategy]) -> str:
    out = ["# Strategic memory", ""]
    for strategy in strategies:
        data = record_to_dict(strategy)
        out.append(f"## {strategy.id}\n")
        out += [
            f"- {k}: {json.dumps(v, ensure_ascii=False)}"
            for k, v in data.items()
            if k not in {"id", "principle"}
        ]
        out.append(f"\n{_escape(strategy.principle)}\n")
    return "\n".join(out)


def _parse_strategies(text: str) -> list[Record]:
    records: list[Record] = []
    blocks: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("## "):
            blocks.append((line[3:].strip(), []))
        elif blocks:
            blocks[-1][1].append(line)
    for record_id, body in blocks:
        data: dict[str, Any] = {"id": record_id}
        rest = list(body)
        while rest and not rest[0].strip():
            rest.pop(0)
        while rest and rest[0].startswith("- "):
            key, _, value = rest.pop(0)[2:].partition(": ")
            data[key.strip()] = json.loads(value)
        data["principle"] = _unescape(_section_text("\n".join(rest)))
        records.append(record_from_dict("strategy", data))
    return records


def export_markdown(
    store: BaseStore, project_key: str, out_dir: Path, *, config: Mapping[str, Any] | None = None
) -> dict[str, int]:
    """Write the project's experience (and global strategies) under ``out_dir/memory``.

    Args:
        store: The memory store.
        project_key: Normalized project key.
        out_dir: Folder that receives ``memory/`` (or a folder named ``memory`` itself).
        config: Retrieval settings to write as ``retrieval_config.json``.

    Returns:
        How many records of each kind were written.
    """
    repo = ExperienceStore(store, project_key)
    root = out_dir if out_dir.name == MEMORY_DIR else out_dir / MEMORY_DIR
    counts: dict[str, int] = {}
    for kind in ("pattern", "episode"):
        records = repo.find(kind)
        for record in records:
            _write(root / FOLDERS[kind] / f"{record.id}.md", _render_record(record))
        counts[kind] = len(records)
    strategies = [r for r in repo.find("strategy") if isinstance(r, Strategy)]
    _write(root / FOLDERS["strategy"] / STRATEGY_FILE, _render_strategies(strategies))
    counts["strategy"] = len(strategies)
    if config is not None:
        _write(root / CONFIG_FILE, json.dumps(dict(config), indent=2, ensure_ascii=False) + "\n")
    return counts


def import_markdown(store: BaseStore, project_key: str, in_dir: Path) -> ExperienceImportReport:
    """Read a Markdown export back into the store (records with the same id are replaced).

    Args:
        store: The memory store.
        project_key: Normalized project key the records belong to.
        in_dir: The folder holding ``memory/`` (or the ``memory`` folder itself).

    Raises:
        ValueError: A file is malformed; nothing after it is imported.
        FileNotFoundError: No ``memory`` folder is found.
    """
    root = (
        in_dir
        if (in_dir / FOLDERS["pattern"]).exists() or in_dir.name == MEMORY_DIR
        else in_dir / MEMORY_DIR
    )
    if not root.is_dir():
        raise FileNotFoundError(f"no {MEMORY_DIR}/ folder in {in_dir}")
    parsed: list[Record] = []
    for kind in ("pattern", "episode"):
        for path in sorted((root / FOLDERS[kind]).glob("*.md")):
            parsed.append(_parse_record(kind, _read(path), path))
    strategy_file = root / FOLDERS["strategy"] / STRATEGY_FILE
    if strategy_file.exists():
        parsed.extend(_parse_strategies(_read(strategy_file)))
    repo = ExperienceStore(store, project_key)
    counts = {"strategy": 0, "pattern": 0, "episode": 0}
    for record in parsed:
        repo.put(record)
        counts[record.kind] += 1
    config_file = root / CONFIG_FILE
    config = json.loads(_read(config_file)) if config_file.exists() else None
    return ExperienceImportReport(counts=counts, config=config)
