"""Task profiling: the labelled table (English and Chinese) and the individual rules."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engram.graph.profile import profile_task
from engram.graph.profile._task_profile import MULTI_FILE_THRESHOLD, RISKS, TASK_TYPES

TABLE = Path(__file__).parents[2] / "data" / "task_profiles.jsonl"
ROWS = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line]
TYPE_ACCURACY_MIN = 0.90
RISK_ACCURACY_MIN = 0.95
HELDOUT = TABLE.with_name("task_profiles_heldout.jsonl")
HELDOUT_ROWS = [
    json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines() if line
]
HELDOUT_MIN = {"dev": (0.92, 0.97), "blind": (0.85, 0.94)}
"""(type, risk) accuracy floors per part of the held-out table, a little below those reached.
The "blind" part was written after the rules and scored once; see bench/RESULTS.md."""


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_table_is_large_and_covers_every_type_risk_and_language():
    assert len(ROWS) >= 60
    assert {r["type"] for r in ROWS} == set(TASK_TYPES)
    assert {r["risk"] for r in ROWS} == set(RISKS)
    chinese = [r for r in ROWS if _has_cjk(r["task"])]
    assert len(chinese) >= 15 and len(ROWS) - len(chinese) >= 30


def test_accuracy_on_labelled_table():
    profiles = [profile_task(r["task"]) for r in ROWS]
    type_ok = sum(p.task_type == r["type"] for p, r in zip(profiles, ROWS, strict=True))
    risk_ok = sum(p.risk == r["risk"] for p, r in zip(profiles, ROWS, strict=True))
    assert type_ok / len(ROWS) >= TYPE_ACCURACY_MIN
    assert risk_ok / len(ROWS) >= RISK_ACCURACY_MIN
    high_as_low = [
        r["task"]
        for p, r in zip(profiles, ROWS, strict=True)
        if r["risk"] == "high" and p.risk == "low"
    ]
    assert high_as_low == []


def _accuracy(rows: list[dict[str, str]]) -> tuple[float, float, list[str]]:
    profiles = [profile_task(r["task"]) for r in rows]
    type_ok = sum(p.task_type == r["type"] for p, r in zip(profiles, rows, strict=True))
    risk_ok = sum(p.risk == r["risk"] for p, r in zip(profiles, rows, strict=True))
    high_as_low = [
        r["task"]
        for p, r in zip(profiles, rows, strict=True)
        if r["risk"] == "high" and p.risk == "low"
    ]
    return type_ok / len(rows), risk_ok / len(rows), high_as_low


def test_heldout_table_is_independent_and_varied():
    assert len(HELDOUT_ROWS) >= 150
    assert not {r["task"] for r in HELDOUT_ROWS} & {r["task"] for r in ROWS}
    for part in HELDOUT_MIN:
        rows = [r for r in HELDOUT_ROWS if r["split"] == part]
        assert len(rows) >= 50
        assert {r["type"] for r in rows} == set(TASK_TYPES)
        assert {r["risk"] for r in rows} == set(RISKS)
    chinese = [r for r in HELDOUT_ROWS if _has_cjk(r["task"])]
    assert 0.25 <= len(chinese) / len(HELDOUT_ROWS) <= 0.5


@pytest.mark.parametrize("part", sorted(HELDOUT_MIN))
def test_accuracy_on_heldout_table(part):
    rows = [r for r in HELDOUT_ROWS if r["split"] == part]
    type_accuracy, risk_accuracy, high_as_low = _accuracy(rows)
    type_min, risk_min = HELDOUT_MIN[part]
    assert type_accuracy >= type_min
    assert risk_accuracy >= risk_min
    assert high_as_low == []


@pytest.mark.parametrize(
    ("task", "task_type"),
    [
        ("fix: totals wrong when the cart has one item", "debug"),
        ("docs(api): pagination parameters", "docs"),
        ("Add a GitHub Actions workflow that runs the linter", "ops"),
        ("Add regression tests for the CSV importer", "test"),
        ("Add a troubleshooting section to the README", "docs"),
        ("给 api/orders.py 补上注释", "docs"),
        ("The worker silently drops messages since the upgrade", "debug"),
        ("Login page is blank after the last release", "debug"),
        ("the Invoice class has 40 methods, can we break it apart?", "refactor"),
        ("Our service crashes with 'could not add tests' in the log", "debug"),
        ("把部署文档更新到最新版本", "docs"),
        ("Why does the scheduler use a heap?", "explain"),
    ],
)
def test_sentence_cues_decide_the_type(task, task_type):
    profile = profile_task(task)
    assert profile.task_type == task_type, profile.reasons


@pytest.mark.parametrize(
    "task",
    [
        "今晚上线支付服务 v3",
        "token 刷新接口返回 401",
        "Add a `deleted_at` column to orders",
        "Drop the legacy_events table",
        "Replace moment.js with date-fns in every component",
        "统一所有模块的日志格式",
    ],
)
def test_risk_families_are_high(task):
    assert profile_task(task).risk == "high"


@pytest.mark.parametrize("task", [r["task"] for r in ROWS[:10]])
def test_profile_is_deterministic_and_explained(task):
    first, second = profile_task(task), profile_task(task)
    assert first == second
    assert first.reasons and any(first.risk in reason for reason in first.reasons)


@pytest.mark.parametrize(
    ("task", "tag"),
    [
        ("Hotfix the checkout total on prod", "production"),
        ("线上环境的配置需要调整", "production"),
        ("Change the permission check for editors", "auth"),
        ("修改登录接口的返回值", "auth"),
        ("Write a migration that renames the column", "schema"),
        ("修改订单表结构", "schema"),
        ("Purge the expired sessions from the database", "data-deletion"),
    ],
)
def test_high_risk_triggers(task, tag):
    profile = profile_task(task)
    assert profile.risk == "high"
    assert tag in profile.features
    assert any("high risk" in reason for reason in profile.reasons)


def test_file_count_threshold_is_strictly_more_than_five():
    five = " ".join(f"m{n}.py" for n in range(MULTI_FILE_THRESHOLD))
    six = " ".join(f"m{n}.py" for n in range(MULTI_FILE_THRESHOLD + 1))
    assert profile_task(f"Fix the import cycle in {five}").risk == "medium"
    six_profile = profile_task(f"Fix the import cycle in {six}")
    assert six_profile.risk == "high" and six_profile.files_affected == 6
    assert "multi-file" in six_profile.features
    assert profile_task("Update the logger in 8 files").files_affected == 8
    assert profile_task("修改 12 个文件里的日志调用").risk == "high"


def test_located_files_count_toward_scope():
    located = [f"src/m{n}.py" for n in range(7)]
    assert profile_task("Fix the date bug", located_files=located).risk == "high"


def test_code_deletion_is_not_data_deletion():
    profile = profile_task("Delete the unused helper functions in utils.py")
    assert "data-deletion" not in profile.features
    assert profile.risk != "high"


@pytest.mark.parametrize(
    "task",
    [
        "Truncate long log lines in the console output",
        "Pagination links on /search drop the active filters",
        "The delete button does nothing on the settings page",
        "Drop support for Python 3.8",
    ],
)
def test_a_deletion_word_without_data_as_its_object_is_not_data_deletion(task):
    assert "data-deletion" not in profile_task(task).features


@pytest.mark.parametrize(
    "task",
    [
        "Truncate the audit_log table every night",
        "Let users delete their own account and all their data",
        "Implement soft delete for blog posts",
        "Add an endpoint for the deletion of inactive customers",
    ],
)
def test_deleting_what_holds_data_is_data_deletion(task):
    profile = profile_task(task)
    assert "data-deletion" in profile.features and profile.risk == "high"


def test_read_only_tasks_on_sensitive_code_are_medium_not_low():
    assert profile_task("Explain how the auth middleware works").risk == "medium"
    assert profile_task("Explain how the retry helper works").risk == "low"


def test_has_tests_from_text_then_project():
    assert profile_task("Refactor the parser; there are no tests").has_tests is False
    assert profile_task("Refactor the parser and keep the existing tests green").has_tests
    assert profile_task("Refactor the parser", project_has_tests=True).has_tests is True
    assert profile_task("Refactor the parser").has_tests is None


def test_unknown_text_defaults_explained():
    profile = profile_task("hmm")
    assert profile.task_type == "feature"
    assert "default" in profile.reasons[0]


def test_to_dict_is_json_ready():
    data = profile_task("Add OAuth login to api/auth.py").to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["files"] == ["api/auth.py"]


def test_slash_words_are_not_paths():
    assert profile_task("Convert src/legacy/upload.js to async/await").files == (
        "src/legacy/upload.js",
    )
    assert profile_task("Fix the CI/CD read/write step").files == ()
    assert profile_task("Move pkg/a/b into lib").files == ("pkg/a/b",)


def test_a_task_of_a_long_number_is_profiled_at_once():
    # a hang guard: the Chinese file-count pattern tried every digit (20,000 took 3.5 s)
    started = time.monotonic()
    profile_task("- " + "0" * 100_000)
    assert profile_task("改 12 个文件").to_dict()["files_affected"] == 12
    assert time.monotonic() - started < 30
