"""locbench-dev inputs shared by the scripts in this folder: cases, gold lines, trees."""

from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATASET = Path(os.environ.get("ENGRAM_SHARED", ROOT.parent / "shared")) / "bench" / "locbench-dev"
CASES = DATASET / "cases.jsonl"


def load_cases(path: str | Path = CASES, only: list[str] | None = None) -> list[dict]:
    """Return the cases (of the repositories in ``only`` when given)."""
    cases = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [c for c in cases if not only or c["repo"] in only]


def load_gold_lines(path: str | Path) -> dict[str, dict[str, list[int]]]:
    """Return each case's gold changed lines per file (bench/locbench/gold_lines.py)."""
    out = {}
    for line in open(path, encoding="utf-8"):
        row = json.loads(line)
        out[row["instance_id"]] = row["lines"]
    return out


def tree_of(trees: str | Path, case: dict) -> Path:
    """Return the case's materialised tree; it is indexed when ``is_indexed`` says so."""
    return Path(trees) / case["repo"].replace("/", "+") / case["base_commit"]


def is_indexed(tree: Path) -> bool:
    return (tree / ".engram" / "index" / "manifest.sqlite").exists()
