"""Conflict rules: a table of cases, and the fast index agreeing with the plain scan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.stores.memory._conflicts import (
    ConflictIndex,
    bigram_similarity,
    conflict_kind,
    find_conflicts,
    skeleton,
)

CASES = [
    # versions and numbers only
    ("This project uses Java 17", "This project uses Java 21", "numbers"),
    ("Python 3.11 is required", "Python 3.12 is required", "numbers"),
    ("Use node v18.2.0 for builds", "Use node v20.1.1 for builds", "numbers"),
    ("The API listens on port 8080", "The API listens on port 9090", "numbers"),
    ("本项目使用 Java 17", "本项目使用 Java 21", "numbers"),
    ("Max line length is 100", "max line length is 120.", "numbers"),
    # duplicates after normalization
    ("Reply in Chinese", "reply in chinese.", "duplicate"),
    ("用户偏好中文回复", "用户偏好中文回复。", "duplicate"),
    # near-duplicates by character bigrams
    ("Always run ruff before committing", "Always run ruff before each commit", "similar"),
    ("We deploy to Kubernetes on GKE", "We deploy on Kubernetes in GKE", "similar"),
    # the same subject with another value, or negated
    ("Reply in Chinese", "Reply in English", "value"),
    ("The database is MySQL", "The database is PostgreSQL", "value"),
    ("Deploy directly to production", "Deploy to staging first", "value"),
    ("Logs go to a file", "Logs go to stdout", "value"),
    ("We never rebase", "We rebase", "value"),
    # genuinely different facts must not block
    ("This project uses Java 17", "Tests are written with JUnit 5", None),
    ("Use pytest for tests", "Use ruff for linting", None),
    ("The cache is Redis", "The database is PostgreSQL", None),
    ("Tests run in CI on every push", "Tests run with pytest", None),
    ("The API returns JSON with snake_case keys", "The API returns JSON", None),
    ("Logs are rotated every day", "Logs are written to stdout", None),
    ("The API listens on port 8080", "The database listens on port 5432", None),
    ("I prefer tabs", "Frontend is written in React", None),
    ("用户偏好中文回复", "项目使用 PostgreSQL 数据库", None),
    ("Staging is at staging.example.com", "Production is at example.com", None),
]


@pytest.mark.parametrize(("new", "old", "expected"), CASES)
def test_conflict_table(new, old, expected):
    assert conflict_kind(new, old) == expected


@pytest.mark.parametrize(("new", "old", "expected"), CASES)
def test_index_agrees_with_table(new, old, expected):
    index = ConflictIndex(["Unrelated filler about bananas", old])
    kinds = [(m.index, m.kind) for m in index.matches(new)]
    assert kinds == ([] if expected is None else [(1, expected)])


def test_similarity_bounds_and_symmetry():
    assert bigram_similarity("abc", "abc") == 1.0
    assert bigram_similarity("abc", "xyz") == 0.0
    assert bigram_similarity("java rocks", "rocks java") == bigram_similarity(
        "rocks java", "java rocks"
    )


def test_skeleton_masks_versions_only():
    assert skeleton("Java 17") == skeleton("java 21") != skeleton("Kotlin 21")


def test_index_grows_after_matching():
    index = ConflictIndex(["Use Java 17"])
    assert index.matches("Use Gradle 8") == []
    index.add("Use Gradle 8")
    assert [m.kind for m in index.matches("use gradle 7")] == ["numbers"]
    assert len(index) == 2


texts = st.text(alphabet="abcde 0123.用户", min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), texts)
def test_index_matches_linear_scan(existing, new):
    expected = {(m.index, m.kind) for m in find_conflicts(new, existing)}
    got = {(m.index, m.kind) for m in ConflictIndex(existing).matches(new)}
    assert got == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), st.lists(texts, max_size=6), texts)
def test_index_stays_exact_when_texts_arrive_after_a_query(first, later, new):
    index = ConflictIndex(first)
    index.REBUILD_AFTER = 3
    index.matches(new)
    for text in later:
        index.add(text)
        index.matches(new)
    expected = {(m.index, m.kind) for m in find_conflicts(new, first + later)}
    assert {(m.index, m.kind) for m in index.matches(new)} == expected
