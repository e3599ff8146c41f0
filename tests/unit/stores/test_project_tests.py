"""Detecting a project's test suite from its layout."""

from __future__ import annotations

import pytest

from engram.stores.project import project_has_tests


@pytest.mark.parametrize(
    "layout",
    [
        ["tests/test_a.py"],
        ["src/pkg/test_util.py"],
        ["web/src/App.test.tsx"],
        ["svc/handler_test.go"],
        ["app/src/FooTest.java"],
        ["spec/"],
    ],
)
def test_finds_common_layouts(tmp_path, layout):
    for entry in layout:
        target = tmp_path / entry
        if entry.endswith("/"):
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("")
    assert project_has_tests(tmp_path) is True


def test_no_tests_and_skipped_folders(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "node_modules" / "lib" / "tests").mkdir(parents=True)
    (tmp_path / ".git" / "tests").mkdir(parents=True)
    assert project_has_tests(tmp_path) is False


def test_too_deep_or_missing(tmp_path):
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "d" / "test_x.py").write_text("")
    assert project_has_tests(tmp_path) is False
    assert project_has_tests(tmp_path / "missing") is None


def test_is_test_path():
    from engram.stores.project import is_test_path

    for path in (
        "tests/test_api.py",
        "pkg/api_test.go",
        "web/app.spec.ts",
        "src/FooTest.java",
        "conftest.py",
        "src/__tests__/x.js",
        "a/test/helpers.py",
    ):
        assert is_test_path(path), path
    for path in ("src/api.py", "testing_utils.py", "contest.py", "docs/tests.md"):
        assert not is_test_path(path), path
