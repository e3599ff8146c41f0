"""`engram context` on a bare Typer app, over the bench pipeline when the builder lacks it.

Lets the whole-process latency be measured before the context pipeline is wired into
``graph/builder.py``; once it is, measure the installed ``engram context`` instead.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import typer  # noqa: E402

import engram.graph.cli.context_commands as cli_context  # noqa: E402
from engram.graph.deps import Deps  # noqa: E402

app = typer.Typer()


@app.callback()
def main() -> None:
    """engram (bench entry)."""


def _pipeline(deps: Deps, store: Any = None) -> Any:
    from pipeline import compose

    return compose(deps)


if "pack_context" not in cli_context.build_graph(Deps()).nodes:
    cli_context.build_graph = _pipeline  # type: ignore[assignment]
cli_context.register(app)

if __name__ == "__main__":
    app()
