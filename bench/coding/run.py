"""Scripted fix tasks through ``engram run``: finished, approvals, rewind, snapshots, verify.

Every task runs on a fresh copy of its fixture under each policy: ``ask`` (no terminal, so
every action is refused), ``auto-edit``, ``allowlist`` (auto-edit with the test commands
allowed in ``.engram/settings.toml``) and ``yolo``. The allowlist runs use git copies, the
others plain folders. After the ``allowlist`` and ``yolo`` runs each session is rewound to its
middle action's checkpoint and to the start, and the trees are compared with the hashes taken
when the model was asked for that step. Snapshot cost per write is timed in-process on the
same edits (``ActionSnapshots`` around each write, as ``run_tools`` does).

Usage: ``.venv/bin/python -m bench.coding.run [--tasks a,b] [--policies yolo,ask] [--out F]``
(``--tables F`` prints the tables of a saved run again).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.coding.harness import POLICIES, RunResult, prepare, run_task
from bench.coding.tasks import Task, all_tasks
from engram.graph.tools import EDIT_TOOL_NAMES, ActionSnapshots, PlannedFiles
from engram.graph.tools._write import plan_edit, write_changes
from engram.stores.project import ProjectState

GIT_POLICIES = ("allowlist",)
REWOUND_POLICIES = ("allowlist", "yolo")


def snapshot_cost(tasks: list[Task], git: bool) -> list[float]:
    """Time snapshot-before + write + snapshot-after for each scripted write, in ms."""
    times: list[float] = []
    for task in tasks:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve() / "proj"
            prepare(task, root, "yolo", git)
            state = ProjectState(root, Path(tmp).resolve() / "home")  # the state stays in tmp
            for index, (tool, args) in enumerate(task.steps + task.retry):
                if tool not in EDIT_TOOL_NAMES:
                    continue
                started = time.perf_counter()
                step = ActionSnapshots(state, "bench", f"checkpoint-{index}")
                before = step.before()
                write_changes(root, state, plan_edit(PlannedFiles(root), tool, args))
                step.after(tool, before)
                times.append((time.perf_counter() - started) * 1000)
                assert not step.notes, step.notes
    return times


def _row(label: str, results: list[RunResult]) -> str:
    finished = sum(r.finished for r in results)
    passed = sum(r.tests == "passed" for r in results)
    asked = sum(r.asked for r in results)
    calls = sum(r.model_calls for r in results)
    return (
        f"| {label} | {len(results)} | {finished} | {passed} | {asked} | "
        f"{asked / len(results):.2f} | {calls} |"
    )


def _rewind_row(results: list[RunResult], policy: str) -> str:
    # a run whose actions were all refused changed nothing: its rewind would prove nothing
    checked = [r for r in results if r.policy == policy and r.rewind and r.snapshot_records]
    middle = [r.rewind.get("middle") for r in checked if "middle" in r.rewind]
    start = [r.rewind.get("start") for r in checked]
    return (
        f"| {policy} ({'git' if policy in GIT_POLICIES else 'plain'}) | "
        f"{sum(m == 'exact' for m in middle)}/{len(middle)} | "
        f"{sum(s == 'exact' for s in start)}/{len(start)} |"
    )


def report(results: list[RunResult], cost: dict[str, list[float]]) -> str:
    """Return the Markdown tables of one bench run."""
    lines = [
        "| policy | tasks | finished (tests pass) | run says passed | approvals asked | "
        "asked per task | model calls |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for policy in dict.fromkeys(r.policy for r in results):
        lines.append(_row(policy, [r for r in results if r.policy == policy]))
    lines += [
        "",
        "| rewind after | to the middle action: exact | to start: exact |",
        "| --- | --- | --- |",
    ]
    lines += [
        _rewind_row(results, p) for p in REWOUND_POLICIES if any(r.policy == p for r in results)
    ]
    lines += [
        "",
        "| snapshots per write | writes | median ms | p90 ms | bytes per logged step "
        "(median of the runs) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, times in cost.items():
        runs = [r for r in results if r.git == (mode == "git") and r.snapshot_records]
        per = [r.snapshot_bytes / r.snapshot_records for r in runs]
        ordered = sorted(times)
        lines.append(
            f"| {mode} | {len(times)} | {statistics.median(times):.1f} | "
            f"{ordered[int(0.9 * len(ordered))]:.1f} | "
            f"{int(statistics.median(per)) if per else '—'} |"
        )
    full = [r for r in results if r.policy == "yolo"]
    retried = [r for r in full if r.verify_calls]
    lines += [
        "",
        f"verify loop (yolo): {len(retried)} of {len(full)} tasks got a failure "
        f"report, {sum(r.verify_calls for r in full)} extra model calls in all "
        f"({sum(r.model_calls for r in full)} calls)",
    ]
    return "\n".join(lines)


def main() -> None:
    """Run the tasks, print the tables, write every result as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--out", default="bench/coding/results.json")
    parser.add_argument("--tables", metavar="JSON", help="only print the tables of saved results")
    args = parser.parse_args()
    if args.tables:
        saved = json.loads(Path(args.tables).read_text())
        print(report([RunResult(**r) for r in saved["runs"]], saved["snapshot_ms"]))
        return
    tasks = [t for t in all_tasks() if not args.tasks or t.name in args.tasks.split(",")]
    policies = args.policies.split(",")
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            for policy in policies:
                where = Path(tmp) / f"{task.name}-{policy}"
                result = run_task(
                    task,
                    where / "proj",
                    where / "home",
                    policy,
                    git=policy in GIT_POLICIES,
                    rewind=policy in REWOUND_POLICIES,
                )
                results.append(result)
                print(json.dumps(_brief(result)), flush=True)
    cost = {"git": snapshot_cost(tasks, True), "plain": snapshot_cost(tasks, False)}
    Path(args.out).write_text(
        json.dumps({"runs": [asdict(r) for r in results], "snapshot_ms": cost}, indent=1) + "\n"
    )
    print(report(results, cost))


def _brief(result: RunResult) -> dict[str, Any]:
    return {k: v for k, v in asdict(result).items() if k not in ("project", "thread_id")}


if __name__ == "__main__":
    main()
