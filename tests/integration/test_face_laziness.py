"""Importing every package face loads none of the private modules behind it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    ".".join(p.relative_to(ROOT).parent.parts)
    for p in (ROOT / "engram").rglob("__init__.py")
    if "__pycache__" not in p.parts
)

pytestmark = pytest.mark.integration


def test_importing_a_face_imports_nothing_behind_it():
    """A face is lazy: importing it loads none of its private modules until a name is used."""
    probe = (
        "import sys\n"
        f"for p in {PACKAGES!r}:\n"
        "    __import__(p)\n"
        "loaded = [m for m in sys.modules if m.startswith('engram.') and "
        "m.rsplit('.', 1)[1].startswith('_')]\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() in ("[]", "['engram._lazy']"), out.stdout
