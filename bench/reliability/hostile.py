"""Hostile repositories and the acting surface: each class tried through the real CLI.

Runs the hostile-repository and sandbox suites (``tests/integration/test_hostile_repository.py``,
``tests/integration/test_sandbox.py``, the rewind and allowlist cases, a scripted hostile model
through the HTTP stub) under pytest with a JUnit
report, and folds the cases into classes: a class held when every case of it passed. A skipped
case (no bubblewrap here) counts as tried and not held, with the reason.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITES = (
    "tests/integration/test_hostile_repository.py",
    "tests/integration/test_sandbox.py",
    "tests/unit/stores/test_snapshots.py",
    "tests/integration/test_rewind_cli.py",
    "tests/unit/graph/test_action_review.py",
    "tests/unit/graph/test_write_tools.py",
    "tests/unit/stores/test_trust.py",
    "tests/unit/stores/test_paths.py",
    "tests/unit/stores/test_redaction.py",
    "tests/unit/stores/test_secrets.py",
    "tests/unit/graph/test_markers.py",
    "tests/unit/stores/test_issue_localization.py",
    "tests/unit/stores/test_extraction.py",
    "tests/unit/graph/test_profile.py",
    "tests/integration/test_history_mining.py",
    "tests/unit/stores/test_ignore_rules.py",
    "tests/unit/stores/test_exact_search.py",
    "tests/integration/test_hostile_model.py",
    "tests/unit/graph/test_malformed_calls.py",
    "tests/integration/test_action_approval.py",
    "tests/unit/graph/test_library_api.py",
    "tests/unit/graph/test_line_redaction.py",
    "tests/unit/graph/test_file_reading.py",
    "tests/unit/graph/test_pack_redaction.py",
    "tests/integration/test_index_backends.py",
    "tests/integration/test_auto_index.py",
)
CLASSES = (
    ("committed MCP server", ("stdio_mcp", "remote_mcp")),
    ("committed settings", ("committed_settings", "allowlist_and_verify")),
    ("committed rules", ("committed_rules", "rules_the_user", "revoking")),
    (
        "trust digest",
        ("trust_covers", "what_was_shown", "forgetting", "linked_shipped", "damaged_trust"),
    ),
    ("linked engram folders", ("committed_link",)),
    ("committed write journal", ("committed_write_journal",)),
    ("protected names, any case", ("protected_folder", "protected_folders_are_matched")),
    (
        "secrets redacted",
        (
            "secrets_a_command",
            "corpus_are_redacted",
            "env_dump",
            "private_key_block",
            "clean_text",
            "code_and_prose",
        ),
    ),
    ("planted snapshot object", ("planted_or_damaged",)),
    ("shipped git filter", ("git_filter_driver",)),
    ("sandbox: writes", ("writes_stay_inside", "allowlisted_test_runner")),
    ("sandbox: network", ("network_is_cut",)),
    ("sandbox: setsid child", ("setsid_child",)),
    ("sandbox: ENGRAM_HOME", ("engram_home_is_hidden",)),
    ("output flood", ("floods_its_output",)),
    ("allowlist outside paths", ("reaching_outside", "program_may_live")),
    ("FIFO / hard link", ("fifo_or_a_hard_linked",)),
    ("rewind after user edit", ("edited_between_two_turns", "user_changed_since")),
    ("rewind --force over link", ("never_follows_a_link",)),
    ("rewind after edit during a command", ("while_a_command_ran", "while_a_command_runs")),
    ("hung file system", ("hangs",)),
    ("forged git history", ("can_forge_a_commit",)),
    ("control characters in names", ("control_characters_are_never_indexed",)),
    ("terminal escapes in content", ("never_send_control_characters", "keeps_its_own_styles")),
    (
        "pathological ignore patterns",
        (
            "takes_long_to_fail",
            "hang_the_walk",
            "returns_at_once",
            "does_not_stall_the_walk",
            "do_not_stall_a_walk",
        ),
    ),
    (
        "catastrophic search pattern",
        ("catastrophic_pattern_in_the_python_fallback", "imports_no_module_the_project_ships"),
    ),
    ("linked ignore file", ("linked_ignore_file_is_never_read",)),
    ("model reads for secrets", ("gets_no_secret_and_no_hang",)),
    (
        "malformed tool calls",
        ("unreadable_arguments", "cannot_be_read", "unreadable_calls", "without_unreadable"),
    ),
    ("calls sharing an id", ("sharing_an_id", "an_id_of_its_own")),
    (
        "secrets in files the model reads",
        (
            "file_the_pack_shows",
            "redacts_a_config_file",
            "to_an_embeddings_endpoint",
            "source_code_keeps",
            "grep_redacts",
            "config_shape",
        ),
    ),
    (
        "secrets split over lines",
        (
            "split_over_lines",
            "continued_on_the_next_line",
            "among_the_lines_around_it",
            "however_far_its_begin_line",
            "page_is_redacted_among",
            "slice_that_starts_under",
            "slice_inside_a_private_key",
            "adjacent_literals",
            "literal_of_its_own",
            "across_its_edge",
            "putty_file",
        ),
    ),
    (
        "text built to make a pattern backtrack",
        (
            "built_to_make_the_patterns_backtrack",
            "long_runs_and_long_lines",
            "judged_at_once",
            "escaped_at_once",
            "its_patterns_backtrack_is_read",
            "spaces_is_trimmed_at_once",
            "long_number_is_profiled_at_once",
        ),
    ),
    ("huge repository indexed on first use", ("few_but_huge_files", "over_the_limit")),
)

Row = tuple[str, int, int, list[str]]


def _cases() -> list[tuple[str, str]]:
    """Run the suites; return (test name, outcome: passed, failed or skipped: reason)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                f"--junitxml={report}",
                *SUITES,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        tree = ElementTree.parse(report)
    cases = []
    for case in tree.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None:
            outcome = f"skipped: {skipped.get('message', '')}"
        elif case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        else:
            outcome = "passed"
        cases.append((case.get("name", ""), outcome))
    return cases


def main() -> list[Row]:
    """Return one row per class: cases tried, held (all passed), and what did not hold."""
    cases = _cases()
    rows: list[Row] = []
    for name, keys in CLASSES:
        mine = [(test, outcome) for test, outcome in cases if any(k in test for k in keys)]
        failures = [f"{test}: {outcome}" for test, outcome in mine if outcome != "passed"]
        rows.append((name, len(mine), len(mine) - len(failures), failures))
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
