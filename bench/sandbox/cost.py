"""What the command sandbox costs: the coding bench's verify commands with and without bubblewrap.

Each fixture of ``bench/coding/fixtures`` is copied to a temp folder and its test command run
through ``run_shell`` (as ``run_command`` and the verify loop run it), alternating sandbox off and
bubblewrap, ``--runs`` times each; the medians of the whole command and their ratio are printed.
Usage: ``python -m bench.sandbox.cost [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from engram.graph import find_sandbox
from engram.graph.tools import run_shell, scrubbed_environment

FIXTURES = Path(__file__).resolve().parents[1] / "coding" / "fixtures"
COMMANDS = {
    "python": f"{sys.executable} -m pytest -q -p no:cacheprovider",
    "javascript": "npm test --silent",
    "java": "make test",
    "true": "true",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    sandbox = find_sandbox("require")
    off = find_sandbox("off")
    env = scrubbed_environment(os.environ)
    print(f"sandbox: {sandbox.label}; {runs} runs each, medians (s)")
    print(f"{'command':<12} {'off':>7} {'bwrap':>7} {'added':>7} {'ratio':>6}")
    for name, command in COMMANDS.items():
        if command.split()[0] in ("npm", "make") and not shutil.which(command.split()[0]):
            print(f"{name:<12} skipped: {command.split()[0]} is not installed")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / name
            if (FIXTURES / name).is_dir():
                shutil.copytree(FIXTURES / name, project)
            else:
                project.mkdir()
            times: dict[str, list[float]] = {"off": [], "bwrap": []}
            for _ in range(runs):
                for label, box in (("off", off), ("bwrap", sandbox)):
                    started = time.perf_counter()
                    run_shell(project, command, 300, env, sandbox=box)
                    times[label].append(time.perf_counter() - started)
        a, b = statistics.median(times["off"]), statistics.median(times["bwrap"])
        print(f"{name:<12} {a:>7.3f} {b:>7.3f} {b - a:>+7.3f} {b / a:>6.2f}")


if __name__ == "__main__":
    main()
