"""Profile a task from its text: task type, features and risk grade, each with its reasons.

Pure and deterministic: pattern rules in English and Chinese, no model, no I/O. The task type
comes from ``engram.graph.profile._task_type`` (phrase rules plus sentence cues: main verb, object
of a
generic verb, prefix, question, report of wrong behaviour); risk from semantic families of
high-risk cues. Every decision adds a human-readable reason so ``engram profile`` can explain
the grade.
Risk rules: production, auth/permission/role, schema/migration/data deletion or
more than five files make a task high risk; single-file changes and feature work are medium;
formatting, comments, renames and explanations are low.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from engram.graph._state_values import TaskProfileValue
from engram.graph.profile._keywords import (
    AUTH,
    CODE_DELETION,
    COSMETIC,
    DELETION,
    FILE_COUNT,
    HAS_TESTS,
    MANY_FILES_WORDS,
    NO_TESTS,
    PATH,
    PRODUCTION,
    SCHEMA,
    STOPWORDS,
    TERM_WORD,
    WRITE_FREE_TYPES,
    TypeName,
)
from engram.graph.profile._task_type import classify_type

TaskType = TypeName
Risk = Literal["low", "medium", "high"]
TASK_TYPES: tuple[TaskType, ...] = (
    "debug",
    "refactor",
    "feature",
    "explain",
    "test",
    "docs",
    "ops",
)
RISKS: tuple[Risk, ...] = ("low", "medium", "high")

MULTI_FILE_THRESHOLD = 5
"""More files than this make a task high risk."""
MANY_FILES = 10
"""Files-affected estimate for wording like "every file" or "the whole codebase"."""


@dataclass(frozen=True)
class TaskProfile:
    """What Phase 0 knows about a task before any planning."""

    task_type: TaskType
    risk: Risk
    files_affected: int
    """Estimated number of files the task touches (0 when the text names none)."""
    files: tuple[str, ...] = ()
    """Paths named in the task text (or located for it), in order of appearance."""
    has_tests: bool | None = None
    """Whether tests cover the code: from the text, else from the project; None if unknown."""
    production: bool = False
    features: tuple[str, ...] = ()
    """Trigger tags: ``production``, ``auth``, ``schema``, ``data-deletion``, ``multi-file``,
    ``no-tests``, ``has-tests``, ``cosmetic``."""
    reasons: tuple[str, ...] = field(default=())
    """Why the type and the grade were chosen, one sentence each."""
    terms: frozenset[str] = frozenset()
    """Salient words of the task (for relating past episodes to it)."""

    def keys(self) -> tuple[str, ...]:
        """Return the lookup keys for strategies: the task type, then the feature tags."""
        return (self.task_type, *self.features)

    def to_dict(self) -> TaskProfileValue:
        """Return a JSON-ready dict (used for state and the CLI)."""
        return {
            "task_type": self.task_type,
            "risk": self.risk,
            "files_affected": self.files_affected,
            "files": list(self.files),
            "has_tests": self.has_tests,
            "production": self.production,
            "features": list(self.features),
            "reasons": list(self.reasons),
        }


def _hits(pattern: re.Pattern[str], text: str) -> list[str]:
    return [m.group(0).strip() for m in pattern.finditer(text)]


def _count_files(text: str, extra: Iterable[str]) -> tuple[int, tuple[str, ...], str]:
    paths = tuple(dict.fromkeys([*(m.group(1) for m in PATH.finditer(text)), *extra]))
    counts = [int(m.group(1) or m.group(2)) for m in FILE_COUNT.finditer(text)]
    many = _hits(MANY_FILES_WORDS, text)
    estimate = max([len(paths), *counts, MANY_FILES if many else 0])
    if many and estimate == MANY_FILES:
        why = f"wide scope ({many[0]})"
    elif counts and estimate == max(counts):
        why = f"{estimate} files stated"
    else:
        why = f"{len(paths)} file path(s) named"
    return estimate, paths, why


def profile_task(
    text: str, *, located_files: Iterable[str] = (), project_has_tests: bool | None = None
) -> TaskProfile:
    """Profile ``text``: type, features and risk with the reasons for each.

    Args:
        text: The task as the user wrote it (English, Chinese or mixed).
        located_files: Files found for the task elsewhere (e.g. by the code index).
        project_has_tests: Whether the project has a test suite, when the caller knows.
    """
    task_type, type_reason = classify_type(text)
    reasons = [type_reason]
    files_affected, files, files_why = _count_files(text, located_files)
    features: list[str] = []
    high: list[str] = []

    production = bool(_hits(PRODUCTION, text))
    checks = (
        ("production", PRODUCTION, "touches production"),
        ("auth", AUTH, "touches authentication/permissions"),
        ("schema", SCHEMA, "changes a schema or runs a migration"),
    )
    for tag, pattern, why in checks:
        found = _hits(pattern, text)
        if found:
            features.append(tag)
            high.append(f"{why} ({found[0]})")
    deletions = _hits(DELETION, text)
    if deletions and len(deletions) > len(_hits(CODE_DELETION, text)):
        features.append("data-deletion")
        high.append(f"deletes data ({deletions[0]})")
    if files_affected > MULTI_FILE_THRESHOLD:
        features.append("multi-file")
        high.append(
            f"affects {files_affected} files, more than {MULTI_FILE_THRESHOLD} ({files_why})"
        )
    elif files_affected:
        reasons.append(f"affects {files_affected} file(s) ({files_why})")

    has_tests = _tests_known(text, project_has_tests, reasons)
    if has_tests is False:
        features.append("no-tests")
    elif has_tests:
        features.append("has-tests")
    cosmetic = _hits(COSMETIC, text)
    if cosmetic:
        features.append("cosmetic")

    risk = _grade(task_type, high, cosmetic, reasons)
    return TaskProfile(
        task_type=task_type,
        risk=risk,
        files_affected=files_affected,
        files=files,
        has_tests=has_tests,
        production=production,
        features=tuple(features),
        reasons=tuple(reasons),
        terms=task_terms(text),
    )


def task_terms(text: str) -> frozenset[str]:
    """Return the salient terms of ``text``: long words and Chinese character bigrams."""
    terms: set[str] = set()
    for word in TERM_WORD.findall(text.lower()):
        if word[0] < "\u4e00":
            if word not in STOPWORDS:
                terms.add(word)
        else:
            terms.update(word[i : i + 2] for i in range(max(1, len(word) - 1)))
    return frozenset(terms)


def _tests_known(text: str, project_has_tests: bool | None, reasons: list[str]) -> bool | None:
    if _hits(NO_TESTS, text):
        reasons.append("the task says there are no tests")
        return False
    if _hits(HAS_TESTS, text):
        reasons.append("the task mentions existing tests")
        return True
    if project_has_tests is not None:
        reasons.append("the project " + ("has" if project_has_tests else "has no") + " tests")
    return project_has_tests


def _grade(task_type: TaskType, high: list[str], cosmetic: list[str], reasons: list[str]) -> Risk:
    if high and task_type in WRITE_FREE_TYPES:
        # Reading or documenting sensitive code changes nothing, but it is never graded low.
        reasons.append(f"medium risk: {task_type} task on sensitive ground: " + "; ".join(high))
        return "medium"
    if high:
        reasons.append("high risk: " + "; ".join(high))
        return "high"
    if task_type in WRITE_FREE_TYPES:
        reasons.append(f"low risk: {task_type} task changes no behaviour")
        return "low"
    if cosmetic and task_type == "refactor":
        reasons.append(f"low risk: cosmetic change ({cosmetic[0]})")
        return "low"
    reasons.append(f"medium risk: {task_type} work that changes behaviour in a bounded area")
    return "medium"


def is_high_risk(profile: Mapping[str, object]) -> bool:
    """Return whether a task profile (as state holds it) grades the task high risk."""
    return profile.get("risk") == "high"
