"""Find the commands that check a project (tests, lint) from its build files, and read failures."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

NPM_PLACEHOLDER = "no test specified"
"""The test script ``npm init`` writes, which only fails."""
FAILURE_LINE = re.compile(
    r"(FAILED|FAIL\b|--- FAIL|\bERROR\b|Error:|Exception|assert|Traceback|✕|✗|panic:"
    r"|expected|Expected|\bfailed\b)"
)
OTHER_BUILD_FILES = ("package.json", "go.mod", "pom.xml", "build.gradle", "build.gradle.kts")
"""Build files of other ecosystems, whose ``test/`` folder says nothing about pytest."""
FAILURE_LINES_SHOWN = 30
FAILURE_LINE_CHARS = 240


def _pyproject(root: Path) -> dict[str, object]:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _python(root: Path) -> str:
    """The project's own interpreter when it has a virtualenv, else ``python``."""
    for candidate in (".venv/bin/python", "venv/bin/python"):
        if (root / candidate).is_file():
            return candidate
    return "python"


def _python_commands(root: Path) -> list[str]:
    tools = _pyproject(root).get("tool")
    tools = tools if isinstance(tools, dict) else {}
    has_pytest = (
        "pytest" in tools
        or any((root / name).exists() for name in ("pytest.ini", "conftest.py"))
        or any(root.glob("test_*.py"))
        or any(_python_test_folder(root, root / name) for name in ("tests", "test"))
    )
    commands = [f"{_python(root)} -m pytest -q"] if has_pytest else []
    if "ruff" in tools:
        commands.append(f"{_python(root)} -m ruff check .")
    return commands


def _python_test_folder(root: Path, folder: Path) -> bool:
    """A tests folder means pytest, unless another ecosystem's project has no Python in it."""
    if not folder.is_dir():
        return False
    if not any((root / name).is_file() for name in OTHER_BUILD_FILES):
        return True
    return next(folder.rglob("*.py"), None) is not None


def _npm_commands(root: Path) -> list[str]:
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(scripts, dict):
        return []
    commands = []
    test = scripts.get("test")
    if isinstance(test, str) and NPM_PLACEHOLDER not in test:
        commands.append("npm test --silent")
    if isinstance(scripts.get("lint"), str):
        commands.append("npm run lint --silent")
    return commands


def _makefile_has(root: Path, target: str) -> bool:
    try:
        text = (root / "Makefile").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"^{re.escape(target)}\s*:", text, re.MULTILINE) is not None


def discover_verify_commands(root: Path) -> tuple[str, ...]:
    """Return the project's test and lint commands, most specific build file first.

    A Makefile ``test`` target wins (the project's own entry point); then pytest and ruff
    from pyproject or the layout, ``package.json`` scripts, ``go.mod``, Maven and Gradle.
    """
    if _makefile_has(root, "test"):
        return ("make test",)
    commands = _python_commands(root) + _npm_commands(root)
    if (root / "go.mod").is_file():
        commands.append("go test ./...")
    if (root / "pom.xml").is_file():
        commands.append("mvn -q test")
    elif (root / "build.gradle").is_file() or (root / "build.gradle.kts").is_file():
        commands.append("./gradlew test" if (root / "gradlew").is_file() else "gradle test")
    return tuple(commands)


def failure_lines(output: str) -> list[str]:
    """Return the lines of a failed run worth showing first: failing tests, assertions, errors."""
    found: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        if text and FAILURE_LINE.search(text) and text not in found:
            found.append(text[:FAILURE_LINE_CHARS])
            if len(found) == FAILURE_LINES_SHOWN:
                break
    return found
