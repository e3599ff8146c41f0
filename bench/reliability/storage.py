"""Hostile repositories and damaged storage, tried through the real CLI (see tests/support).

Every case of ``tests.support.storage_faults.CASES`` runs ``engram`` as a subprocess on a fresh
project and home: a repository shipping pickles and forged index files, a damaged index, damaged
or unusable stores, a hostile import file, ``engram doctor``. A case holds when no planted code
ran, no traceback was printed, and the exit code, message and follow-up check are right.
Usage: ``python bench/reliability/storage.py`` (or through ``bench/reliability/run.py``).
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.storage_faults import CASES, run_case  # noqa: E402

Row = tuple[str, int, int, list[str]]


def main() -> list[Row]:
    """Run every case; return (category, tried, held, failures) per category."""
    tried: dict[str, int] = defaultdict(int)
    failures: dict[str, list[str]] = defaultdict(list)
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="engram-reliability-") as work:
            outcome = run_case(case, Path(work))
        tried[case.category] += 1
        if outcome:
            failures[case.category].append(f"{case.name}: {outcome[:300]}")
    return [
        (category, count, count - len(failures[category]), failures[category])
        for category, count in tried.items()
    ]


if __name__ == "__main__":
    for category, count, held, failed in main():
        print(f"{category:<22} tried {count:>3} held {held:>3} failed {len(failed):>3}")  # noqa: T201
        for failure in failed:
            print(f"  FAILED {failure}")  # noqa: T201
