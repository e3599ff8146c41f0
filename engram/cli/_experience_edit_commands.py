"""``add`` and ``edit`` commands for strategies, patterns and episodes."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from engram.cli._command_support import fail, handle_errors, out_console, print_json

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from engram.stores.memory import ExperienceStore, Kind, Record, Trigger

# The commands import the experience records and stores when they run, not when the CLI starts:
# `engram --help` and the other commands should not pay for them.

# Quoted: the store types load LangGraph, so they are imported only when type-checking.
Opener = Callable[[Path | None], AbstractContextManager[tuple["BaseStore", "ExperienceStore"]]]
PathOption = Annotated[Path | None, typer.Option("--path", "-p", help="Project root.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
Csv = Annotated[str | None, typer.Option(help="Comma-separated values.")]
Text = Annotated[str | None, typer.Option()]
TRISTATE = {"yes": True, "true": True, "no": False, "false": False, "any": None}


def parse_list(value: str | None) -> tuple[str, ...] | None:
    """Split a comma-separated option; None stays None (not given)."""
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


def parse_tristate(value: str | None) -> bool | None:
    """Read yes / no / any (any means "no condition")."""
    if value is None or value.lower() not in TRISTATE:
        fail(f"expected yes, no or any, not {value!r}", "use --has-tests yes|no|any")
    return TRISTATE[value.lower()]


def replace_fields(record: Record, changes: dict[str, Any]) -> Record:
    """Return ``record`` with the non-None ``changes`` applied (validated again)."""
    return dataclasses.replace(record, **{k: v for k, v in changes.items() if v is not None})


def _save(opener: Opener, path: Path | None, record: Record, verb: str, as_json: bool) -> None:
    from engram.stores.memory import record_to_dict

    with opener(path) as (_, repo):
        repo.put(record)
    if as_json:
        print_json({"action": verb, "kind": record.kind, **record_to_dict(record)})
    else:
        out_console.print(f"{verb} {record.kind} {record.id}", markup=False)


def _load(opener: Opener, path: Path | None, kind: Kind, record_id: str) -> Record:
    with opener(path) as (_, repo):
        record = repo.get(kind, record_id)
    if record is None:
        fail(f"no {kind} {record_id}", "check the id with the list command")
    return record


def _trigger(
    old: Trigger,
    task_types: str | None,
    min_files: int | None,
    has_tests: str | None,
    production: str | None,
    features: str | None,
) -> Trigger:
    from engram.stores.memory import Trigger

    return Trigger(
        task_types=(parse_list(task_types) or ()) if task_types is not None else old.task_types,
        min_files=(None if min_files == 0 else min_files)
        if min_files is not None
        else old.min_files,
        has_tests=parse_tristate(has_tests) if has_tests is not None else old.has_tests,
        production=parse_tristate(production) if production is not None else old.production,
        features=(parse_list(features) or ()) if features is not None else old.features,
    )


def add_commands(group: typer.Typer, kind: Kind, opener: Opener) -> None:
    """Register ``add`` and ``edit`` for ``kind`` on ``group``."""
    makers = {
        "strategy": _strategy_commands,
        "pattern": _pattern_commands,
        "episode": _episode_commands,
    }
    add, edit = makers[kind](opener)
    group.command("add")(handle_errors(_invalid_values_fail(add)))
    group.command("edit")(handle_errors(_invalid_values_fail(edit)))


def _invalid_values_fail(command: Callable[..., None]) -> Callable[..., None]:
    """Report a rejected field value (bad priority, confidence out of range) as a user error."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except ValueError as exc:
            fail(str(exc), "fix the value and run the command again")

    return wrapper


def _strategy_commands(opener: Opener) -> tuple[Callable[..., None], Callable[..., None]]:
    def add(
        principle: Annotated[str, typer.Argument(help="The principle.")],
        applies_to: Csv = None,
        priority: str = "medium",
        source: str = "user",
        global_: Annotated[bool, typer.Option("--global")] = False,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Add a strategy for task types / feature tags (--applies-to refactor,production)."""
        from engram.stores.memory import Strategy, new_id

        now = datetime.now(UTC)
        record = Strategy(
            id=new_id("st", now),
            principle=principle,
            applies_to=parse_list(applies_to) or (),
            priority=priority,  # type: ignore[arg-type]
            source=source,
            scope="global" if global_ else "project",
            created=now,
        )
        _save(opener, path, record, "added", as_json)

    def edit(
        record_id: Annotated[str, typer.Argument()],
        principle: Text = None,
        applies_to: Csv = None,
        priority: Text = None,
        source: Text = None,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Change fields of a strategy."""
        record = replace_fields(
            _load(opener, path, "strategy", record_id),
            {
                "principle": principle,
                "applies_to": parse_list(applies_to),
                "priority": priority,
                "source": source,
            },
        )
        _save(opener, path, record, "edited", as_json)

    return add, edit


def _pattern_commands(opener: Opener) -> tuple[Callable[..., None], Callable[..., None]]:
    def add(
        name: Annotated[str, typer.Argument(help="Short name of the failure pattern.")],
        task_types: Csv = None,
        min_files: int | None = None,
        has_tests: str = "any",
        production: str = "any",
        features: Csv = None,
        failure: str = "",
        root_cause: str = "",
        prevention: str = "",
        confidence: int = 3,
        evidence: Csv = None,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Add a pattern: trigger, failure, root cause, prevention and confidence (1–5)."""
        from engram.stores.memory import Pattern, Trigger, new_id

        now = datetime.now(UTC)
        trigger = _trigger(Trigger(), task_types, min_files, has_tests, production, features)
        record = Pattern(
            id=new_id("pat", now),
            name=name,
            trigger=trigger,
            failure=failure,
            root_cause=root_cause,
            prevention=prevention,
            confidence=confidence,
            last_validated=now,
            evidence=parse_list(evidence) or (),
            created=now,
        )
        _save(opener, path, record, "added", as_json)

    def edit(
        record_id: Annotated[str, typer.Argument()],
        name: Text = None,
        task_types: Csv = None,
        min_files: int | None = None,
        has_tests: Text = None,
        production: Text = None,
        features: Csv = None,
        failure: Text = None,
        root_cause: Text = None,
        prevention: Text = None,
        confidence: int | None = None,
        status: Text = None,
        superseded_by: Text = None,
        evidence: Csv = None,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Change fields of a pattern (--min-files 0 removes the file condition)."""
        from engram.stores.memory import Pattern

        old = _load(opener, path, "pattern", record_id)
        if not isinstance(old, Pattern):
            fail(f"{record_id} is not a pattern")
        record = replace_fields(
            old,
            {
                "name": name,
                "failure": failure,
                "root_cause": root_cause,
                "prevention": prevention,
                "confidence": confidence,
                "status": status,
                "superseded_by": superseded_by,
                "evidence": parse_list(evidence),
                "trigger": _trigger(
                    old.trigger, task_types, min_files, has_tests, production, features
                ),
            },
        )
        _save(opener, path, record, "edited", as_json)

    return add, edit


def _episode_commands(opener: Opener) -> tuple[Callable[..., None], Callable[..., None]]:
    def add(
        summary: Annotated[str, typer.Argument(help="What the task was.")],
        task_type: str = "feature",
        outcome: str = "unknown",
        files: Csv = None,
        lesson: str = "",
        prevention: str = "",
        severity: int = 3,
        date: Text = None,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Record an episode by hand (outcome success|failure|unknown, severity 1–4)."""
        from engram.stores.memory import Episode, new_id

        now = datetime.now(UTC)
        when = datetime.fromisoformat(date) if date else now
        record = Episode(
            id=new_id("ep", when),
            date=when if when.tzinfo else when.replace(tzinfo=UTC),
            task_type=task_type,
            summary=summary,
            outcome=outcome,  # type: ignore[arg-type]
            files=parse_list(files) or (),
            lesson=lesson,
            prevention=prevention,
            severity=severity,
        )
        _save(opener, path, record, "added", as_json)

    def edit(
        record_id: Annotated[str, typer.Argument()],
        summary: Text = None,
        task_type: Text = None,
        outcome: Text = None,
        files: Csv = None,
        lesson: Text = None,
        prevention: Text = None,
        severity: int | None = None,
        path: PathOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Change fields of an episode."""
        record = replace_fields(
            _load(opener, path, "episode", record_id),
            {
                "summary": summary,
                "task_type": task_type,
                "outcome": outcome,
                "files": parse_list(files),
                "lesson": lesson,
                "prevention": prevention,
                "severity": severity,
            },
        )
        _save(opener, path, record, "edited", as_json)

    return add, edit
