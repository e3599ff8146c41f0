"""``kill -9`` at random moments of index, import, run and compaction (see tests/support).

Each category of ``tests.support.crash_points.TRIALS`` runs N times with its own random delay
before the kill (``--kills N``, default 3; ``--seed`` to replay). A trial holds when the stores
still open, the index answers old or new and ``engram index`` recovers, an import is whole per
batch, a session resumes to the model's answer, a compaction leaves the old history or the new.
Usage: ``python bench/reliability/crashes.py [--kills N] [--seed S]`` (or through run.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.crash_points import TRIALS, run_trials  # noqa: E402

Row = tuple[str, int, int, list[str]]
KILLS = int(os.environ.get("ENGRAM_RELIABILITY_KILLS", "3"))
SEED = int(os.environ.get("ENGRAM_RELIABILITY_SEED", "15"))


def main(kills: int = KILLS, seed: int = SEED) -> list[Row]:
    """Run ``kills`` trials per category; return (category, tried, held, failures) rows."""
    rows = []
    for offset, category in enumerate(TRIALS):
        with tempfile.TemporaryDirectory(prefix="engram-crash-") as work:
            failures = run_trials(category, kills, Path(work), seed + offset)
        rows.append((category, kills, kills - len(failures), failures))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=KILLS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    for category, tried, held, failed in main(args.kills, args.seed):
        print(f"{category:<22} tried {tried:>3} held {held:>3} failed {len(failed):>3}")  # noqa: T201
        for failure in failed:
            print(f"  FAILED {failure}")  # noqa: T201
