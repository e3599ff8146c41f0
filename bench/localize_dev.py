"""Shared set-up of the benchmarks on ../shared/bench/localize-dev: paths and a timed entry.

It re-exports the dataset's own scorer and test-path rule (``bm25_baseline``), so every
benchmark scores cases the way the dataset's baseline does.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
DATASET = ROOT.parent / "shared" / "bench" / "localize-dev"
"""The dataset folder beside the checkout (read-only; never copied into the repository)."""

if str(DATASET) not in sys.path:
    sys.path.insert(0, str(DATASET))

from bm25_baseline import evaluate, is_test_path  # noqa: E402

__all__ = ["DATASET", "ROOT", "evaluate", "is_test_path", "run_timed"]


def run_timed(main: Callable[[], int]) -> NoReturn:
    """Run a benchmark's ``main``, print its wall time on stderr, and exit with its code."""
    started = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    raise SystemExit(code)
