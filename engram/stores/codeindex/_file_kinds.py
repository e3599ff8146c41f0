"""What a project file is for: source, test, docs, example, script, data or vendored code.

Someone who asks to fix a bug wants the code that has the bug first, not the changelog that
mentions it or the test that shows it. Ranking uses the kind as a prior, lifted when the task
is about that kind (a docs task wants docs). Judged from the path alone; pure.
"""

from __future__ import annotations

import re
from typing import Literal

FileKind = Literal["source", "test", "docs", "example", "script", "stub", "data", "vendored"]

SOURCE_SUFFIXES = frozenset(
    {
        ".py",
        ".pyx",
        ".java",
        ".kt",
        ".scala",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".swift",
    }
)
DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".html", ".ipynb"})
TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
"""Folder names, or parts of folder names (``test-data``, ``unit_tests``), that hold tests."""
TEST_FILE_WORDS = frozenset({"tests"})
"""Words of a file name (split at ``-``, ``_``, ``.``) that make it a test file: ``tests.py``
(Django's and unittest's convention), ``tests-cookbook.py``, ``run_tests.py``. Not ``test`` or
``testing`` alone: ``werkzeug/test.py`` and ``flask/testing.py`` are helpers a project ships."""
STUB_SUFFIXES = frozenset({".pyi", ".d.ts"})
DOC_FOLDERS = frozenset({"doc", "docs", "documentation", "changes", "changelog", "news"})
EXAMPLE_FOLDERS = frozenset({"example", "examples", "samples", "sample", "demo", "demos"})
SCRIPT_FOLDERS = frozenset({"scripts", "script", "tools", "bin", "ci", "benchmarks", "bench"})
VENDORED_FOLDERS = frozenset(
    {"vendor", "vendored", "third_party", "thirdparty", "_vendor", "node_modules", "external"}
)


def file_kind(path: str) -> FileKind:
    """Classify a repo-relative posix path by what the file is for."""
    parts = path.lower().split("/")
    folders, name = parts[:-1], parts[-1]
    stem, dot, suffix = name.rpartition(".")
    suffix = dot + suffix if dot else ""
    if any(p in VENDORED_FOLDERS for p in folders):
        return "vendored"
    if (
        any(_names_tests(p) for p in folders)
        or name.startswith("test_")
        or stem.endswith(("_test", ".test", ".spec"))
        or any(part in TEST_FILE_WORDS for part in re.split(r"[-_.]", stem))
        or name == "conftest.py"
    ):
        return "test"
    if suffix in DOC_SUFFIXES or any(p in DOC_FOLDERS for p in folders):
        return "docs"
    if suffix in STUB_SUFFIXES or name.endswith(".d.ts"):
        return "stub"
    if suffix not in SOURCE_SUFFIXES:
        return "data"
    if any(p in EXAMPLE_FOLDERS for p in folders):
        return "example"
    if any(p in SCRIPT_FOLDERS or p.endswith("scripts") for p in folders) or name == "setup.py":
        return "script"
    return "source"


def is_code_file(path: str) -> bool:
    """Return True for a file of a programming language (its suffix is a SOURCE_SUFFIXES one)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    _, dot, suffix = name.rpartition(".")
    return bool(dot) and "." + suffix.lower() in SOURCE_SUFFIXES


def kinds_for_task(task_type: str | None) -> tuple[FileKind, ...]:
    """Return the kinds of file a task of ``task_type`` is about (the task profile's type).

    Every task is about source code; a test task is also about tests, a docs task about docs.
    """
    if task_type == "test":
        return ("source", "test")
    if task_type == "docs":
        return ("source", "docs")
    return ("source",)


def _names_tests(folder: str) -> bool:
    parts = re.split(r"[-_.]", folder)
    return folder in TEST_FOLDERS or any(part in TEST_FOLDERS for part in parts)
