"""`engram context` on a bare Typer app: the command's cost without the rest of the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import typer  # noqa: E402

import engram.cli._context_commands as cli_context  # noqa: E402

app = typer.Typer()


@app.callback()
def main() -> None:
    """engram (bench entry)."""


cli_context.register(app)

if __name__ == "__main__":
    app()
