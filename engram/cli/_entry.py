"""The ``engram`` console script: answer ``--version`` at once, hand every other command to the app.

``engram --version`` is what scripts, editors and package checks call to see whether engram is
there; it needs neither Typer nor Rich, so it is answered before they are imported. The
commands the warm server answers (``engram serve``; ``engram.cli._forwarded`` lists them) are
handed to it next, with the standard library only. Everything else, and whatever the server
does not take, goes to the Typer app unchanged.
"""

from __future__ import annotations

import gc
import sys

from engram import __version__
from engram.cli._forwarded import is_forwarded

VERSION_ARGS = ["--version"]
"""The command line answered here without loading the app."""

GC_YOUNG_THRESHOLD = 10_000
"""Allocations between two collections of the youngest objects (Python's default: 700).

A command imports several hundred thousand long-lived objects (LangGraph, Chroma, Pydantic
models) and builds its indexes' tables: at the default the collector ran about 450 times in
one ``engram context`` and scanned the whole heap three times, 0.30 s of CPU out of 2.5 s; at
this threshold, 0.17 s, and its peak memory stayed at 264 MB (cyclic garbage waits a little
longer to be freed).
"""


def main() -> None:
    """Run the ``engram`` command line with the process's arguments."""
    args = sys.argv[1:]
    if args == VERSION_ARGS:
        sys.stdout.write(f"engram {__version__}\n")
        return
    if is_forwarded(args):
        from engram.cli._serve_client import forward, serve_enabled

        if serve_enabled():
            code = forward(args)
            if code is not None:
                raise SystemExit(code)
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    from engram.cli._app import run_app

    try:
        run_app()
    finally:
        # The process ends: spare the interpreter's shutdown its full collections over every
        # object the command loaded (0.1-0.3 s with LangGraph or Chroma loaded). Objects are
        # still released as their modules are cleared; only unreachable cycles are left to the
        # operating system.
        gc.freeze()
