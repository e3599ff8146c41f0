"""The ``engram`` console script: answer ``--version`` at once, hand every other command to the app.

``engram --version`` is what scripts, editors and package checks call to see whether engram is
there; it needs neither Typer nor Rich, so it is answered before they are imported. Everything
else, ``engram --version`` among other arguments included, goes to the Typer app unchanged.
"""

from __future__ import annotations

import sys

from engram import __version__

__all__ = ["main"]

VERSION_ARGS = ["--version"]
"""The command line answered here without loading the app."""


def main() -> None:
    """Run the ``engram`` command line with the process's arguments."""
    if sys.argv[1:] == VERSION_ARGS:
        sys.stdout.write(f"engram {__version__}\n")
        return
    from engram.graph.cli.app import main as run_app

    run_app()
