"""Discovering a project's checks from its build files, and picking failure lines."""

from __future__ import annotations

import json
from pathlib import Path

from engram.stores.project import discover_verify_commands, failure_lines


def test_python_project(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n[tool.ruff]\n")
    assert discover_verify_commands(tmp_path) == ("python -m pytest -q", "python -m ruff check .")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    assert discover_verify_commands(tmp_path)[0] == ".venv/bin/python -m pytest -q"


def test_tests_folder_alone_means_pytest(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    assert discover_verify_commands(tmp_path) == ("python -m pytest -q",)


def test_a_test_folder_of_another_language_is_no_pytest(tmp_path: Path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "node --test"}}))
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "dates.test.js").write_text("")
    assert discover_verify_commands(tmp_path) == ("npm test --silent",)
    (tmp_path / "test" / "helper.py").write_text("")  # Python tests beside the JavaScript
    assert discover_verify_commands(tmp_path) == ("python -m pytest -q", "npm test --silent")


def test_node_go_java_and_make(tmp_path: Path):
    (tmp_path / "package.json").write_text(
        json.dumps({"scripts": {"test": "vitest run", "lint": "eslint ."}})
    )
    (tmp_path / "go.mod").write_text("module x\n")
    (tmp_path / "pom.xml").write_text("<project/>")
    assert discover_verify_commands(tmp_path) == (
        "npm test --silent",
        "npm run lint --silent",
        "go test ./...",
        "mvn -q test",
    )
    (tmp_path / "Makefile").write_text("build:\n\tgo build\ntest: build\n\tgo test ./...\n")
    assert discover_verify_commands(tmp_path) == ("make test",)


def test_placeholders_and_nothing(tmp_path: Path):
    (tmp_path / "package.json").write_text(
        json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})
    )
    (tmp_path / "build.gradle").write_text("")
    assert discover_verify_commands(tmp_path) == ("gradle test",)
    (tmp_path / "build.gradle").unlink()
    assert discover_verify_commands(tmp_path) == ()


def test_failure_lines():
    output = (
        "....F\n=== FAILURES ===\n___ test_mul ___\n    assert mul(2, 3) == 6\n"
        "E   assert 5 == 6\nFAILED test_calc.py::test_mul - assert 5 == 6\n1 failed\n"
    )
    lines = failure_lines(output)
    assert "FAILED test_calc.py::test_mul - assert 5 == 6" in lines
    assert "E   assert 5 == 6" in lines and "1 failed" in lines
    assert "....F" not in lines
