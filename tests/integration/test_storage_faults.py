"""Hostile repositories and damaged stores: no planted code runs, no traceback, a clear message.

A project that ships its own ``.engram/index`` (pickles under every name the index uses, a
forged stamp, malformed JSON) is rebuilt, never read; a damaged index repairs itself; damaged or
unusable stores in ``ENGRAM_HOME`` give one message saying what to do.
"""

from __future__ import annotations

import pytest

from tests.support.storage_faults import CASES, run_case

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_storage_fault_holds(case, tmp_path):
    assert run_case(case, tmp_path) == ""
