"""Detect whether a project has a test suite, by a shallow look at its layout."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engram.stores.files import SKIP_DIRS

TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})
TEST_FILE = re.compile(
    r"^(test_.+\.py|.+_test\.(py|go)|.+\.(test|spec)\.(js|jsx|ts|tsx)|.+Tests?\.(java|kt))$"
)


def is_test_path(path: str) -> bool:
    """Return True for a test file by its name or a test folder on its path (posix)."""
    parts = path.split("/")
    return (
        bool(TEST_FILE.match(parts[-1]))
        or parts[-1] == "conftest.py"
        or any(part in TEST_DIRS for part in parts[:-1])
    )


SCAN_DEPTH = 3
"""Folder levels looked at below the root (tests live near the top in nearly every layout)."""
SCAN_MAX_ENTRIES = 5_000
"""Entries inspected at most, so a huge tree costs a bounded few milliseconds."""


def project_has_tests(root: Path) -> bool | None:
    """Tell whether ``root`` holds tests; None when it is not a readable folder."""
    if not root.is_dir():
        return None
    seen = 0
    level = [root]
    for _ in range(SCAN_DEPTH):
        below: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > SCAN_MAX_ENTRIES:
                    return False
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in TEST_DIRS:
                        return True
                    if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                        below.append(Path(entry.path))
                elif TEST_FILE.match(entry.name):
                    return True
        level = below
    return False
