"""The `index` and `search` commands as a standalone program, for whole-process benchmarks."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import typer  # noqa: E402

from engram.cli._index_commands import register  # noqa: E402

app = typer.Typer()


@app.callback()
def _root() -> None:
    """Engram code index commands."""


register(app)

if __name__ == "__main__":
    app()
