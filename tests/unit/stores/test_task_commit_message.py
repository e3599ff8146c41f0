"""The message of a task's commit: the task as a short subject, then files and test outcome."""

from __future__ import annotations

from engram.stores._task_commit import SUBJECT_CHARS, commit_message


def test_a_short_task_is_the_subject_and_the_body_lists_files_and_tests():
    message = commit_message(
        "Fix the greeting", ["app.py", "tests/test_app.py"], "passed", ["pytest -q"]
    )
    assert message == (
        "Fix the greeting\n\nFiles changed:\n- app.py\n- tests/test_app.py\n\n"
        "Tests: passed (pytest -q)\n"
    )


def test_a_long_or_multi_line_task_is_cut_at_a_word_within_the_limit():
    task = (
        "Make the parser accept trailing commas in every list and dictionary literal, "
        "then update the docs\nand more lines that are details"
    )
    subject = commit_message(task, ["p.py"], "not-run").splitlines()[0]
    assert len(subject) <= SUBJECT_CHARS and subject.endswith("…")
    assert subject.startswith("Make the parser accept trailing commas")
    assert "details" not in subject
    assert "Tests: not run\n" in commit_message(task, ["p.py"], "not-run")


def test_an_empty_task_still_gets_a_subject():
    assert commit_message("   ", ["a"], "failed").startswith("engram task\n")
