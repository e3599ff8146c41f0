"""Profile accuracy on labelled task tables: type, risk, high graded low, confusion.

Usage: .venv/bin/python -m bench.phase0.profile_accuracy [TABLE.jsonl ...] [--errors]

Each table line is ``{"task": str, "type": str, "risk": str}``, optionally with ``"split"``
(figures are then given per split too). Without arguments it scores
``tests/data/task_profiles.jsonl`` and ``tests/data/task_profiles_heldout.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from engram.graph.profile import profile_task
from engram.graph.profile._task_profile import TASK_TYPES

DEFAULT_TABLES = (
    Path("tests/data/task_profiles.jsonl"),
    Path("tests/data/task_profiles_heldout.jsonl"),
)


def score(rows: list[dict[str, str]]) -> dict[str, object]:
    """Return accuracy figures and the misses for ``rows``."""
    type_ok = risk_ok = 0
    high_low: list[str] = []
    confusion: Counter[tuple[str, str]] = Counter()
    misses: list[str] = []
    for row in rows:
        profile = profile_task(row["task"])
        type_ok += profile.task_type == row["type"]
        risk_ok += profile.risk == row["risk"]
        confusion[(row["type"], profile.task_type)] += 1
        if row["risk"] == "high" and profile.risk == "low":
            high_low.append(row["task"])
        if profile.task_type != row["type"] or profile.risk != row["risk"]:
            misses.append(
                f"{row['type']}/{row['risk']} -> {profile.task_type}/{profile.risk}: {row['task']}"
            )
    n = len(rows)
    return {
        "tasks": n,
        "type": type_ok / n,
        "risk": risk_ok / n,
        "type_ok": type_ok,
        "risk_ok": risk_ok,
        "high_as_low": high_low,
        "confusion": {
            t: {p: confusion[(t, p)] for p in TASK_TYPES if confusion[(t, p)]} for t in TASK_TYPES
        },
        "misses": misses,
    }


def main() -> None:
    """Score each table given on the command line and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tables", nargs="*", type=Path)
    parser.add_argument("--errors", action="store_true", help="list every miss")
    args = parser.parse_args()
    for table in args.tables or DEFAULT_TABLES:
        rows = [
            json.loads(line)
            for line in table.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        parts = {"all": rows}
        for row in rows:
            if "split" in row:
                parts.setdefault(row["split"], []).append(row)
        for part, part_rows in parts.items():
            _report(f"{table} [{part}]", score(part_rows), errors=args.errors and part == "all")


def _report(name: str, result: dict[str, object], *, errors: bool) -> None:
    print(
        f"{name}: {result['tasks']} tasks, type {result['type']:.1%} "
        f"({result['type_ok']}), risk {result['risk']:.1%} ({result['risk_ok']}), "
        f"high graded low {len(result['high_as_low'])}"
    )  # type: ignore[arg-type]
    print(
        "  confusion (label: graded counts):", json.dumps(result["confusion"], ensure_ascii=False)
    )
    if errors:
        for miss in result["misses"]:  # type: ignore[attr-defined]
            print("  ", miss)


if __name__ == "__main__":
    main()
