"""Where engram keeps a project's own state in a test: under the test's ENGRAM_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from engram.stores.project import ProjectState


def state_of(project: Path, home: Path | None = None) -> ProjectState:
    """Return the state folder of ``project`` under ``home`` (default: ``$ENGRAM_HOME``)."""
    base = home if home is not None else Path(os.environ["ENGRAM_HOME"])
    return ProjectState(Path(project).resolve(), Path(base).expanduser().resolve())
