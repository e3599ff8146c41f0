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


HOME_HELP = (
    "ENGRAM_HOME the trees were indexed with (bench/context/locbench.py --home); "
    "default: $ENGRAM_HOME, else ~/.engram"
)


def engram_home(value: str = "") -> Path:
    """Return the ENGRAM_HOME holding the trees' indexes: ``value``, $ENGRAM_HOME or ~/.engram."""
    return Path(value or os.environ.get("ENGRAM_HOME", "~/.engram")).expanduser().resolve()


def tree_of(trees: str | Path, case: dict) -> Path:
    """Return the case's materialised tree; it is indexed when ``is_indexed`` says so."""
    return Path(trees) / case["repo"].replace("/", "+") / case["base_commit"]


def is_indexed(tree: Path, home: Path) -> bool:
    """Tell whether ``tree`` has a code index in its state folder under ``home``."""
    from engram.stores.codeindex import INDEX_DIR
    from engram.stores.project import ProjectState

    state = ProjectState(Path(tree).resolve(), Path(home).expanduser().resolve())
    return state.path(INDEX_DIR, "manifest.sqlite").exists()
