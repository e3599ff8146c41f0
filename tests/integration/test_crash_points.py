"""``kill -9`` at random moments of ``engram index``, ``memory import``, ``run``, compaction.

Two kills per category with a fixed seed (the long version is ``bench/reliability/crashes.py``):
the stores open afterwards, the index answers and recovers, an import is whole per batch, a
session resumes, a compaction leaves a whole history.
"""

from __future__ import annotations

import pytest

from tests.support.crash_points import TRIALS, run_trials

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

KILLS = 2


@pytest.mark.parametrize("category", list(TRIALS))
def test_kill_minus_nine_holds(category, tmp_path):
    assert run_trials(category, KILLS, tmp_path, seed=len(category)) == []
