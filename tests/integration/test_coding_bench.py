"""Three of the coding bench's scripted tasks (one per fixture project), so its harness holds.

Each runs through the real ``engram run`` against the HTTP OpenAI stub on a temp copy of its
fixture, then is rewound to its middle action and to the start (``bench/coding``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.coding.harness import run_task
from bench.coding.tasks import all_tasks

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TASKS = {t.name: t for t in all_tasks()}


@pytest.mark.parametrize(
    ("name", "policy", "retried"),
    [
        ("py-cart-quantity", "yolo", True),  # a wrong fix the verify loop catches
        ("js-pad-left", "yolo", False),  # commands that create and delete a file
        ("java-withdraw-all", "allowlist", False),  # git copy, `make test` allowlisted
    ],
)
def test_a_scripted_task_finishes_and_rewinds_exactly(name, policy, retried, tmp_path: Path):
    result = run_task(
        TASKS[name],
        tmp_path / "proj",
        tmp_path / "home",
        policy,
        git=policy == "allowlist",
        rewind=True,
    )
    assert result.returncode == 0, result.rewind
    assert result.finished and result.tests == "passed"
    assert result.asked == 0
    assert (result.verify_calls > 0) == retried
    assert result.snapshot_records >= 2
    held = result.rewind.pop("held", [])  # what commands made: restored only with --force
    assert result.rewind == {"first_request_is_start": True, "middle": "exact", "start": "exact"}
    assert all(
        not path.endswith((".py", ".js", ".java")) or path.endswith(".orig") for path in held
    )


def test_every_task_breaks_its_fixture_and_scripts_a_fix():
    assert len(TASKS) >= 20
    assert {t.project for t in TASKS.values()} == {"python", "javascript", "java"}
    for task in TASKS.values():
        if task.bug is not None:
            assert task.buggy(task.bug[0]) != task.fixed(task.bug[0]), task.name
        tools = {tool for tool, _ in task.steps + task.retry}
        assert tools & {"edit_file", "write_file", "apply_patch", "run_command"}, task.name
