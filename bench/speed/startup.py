"""How long the ``engram`` command takes to start: whole-process wall time of cheap commands.

Runs each command ``--runs`` times (after one unmeasured warm-up run that fills the page cache
and the bytecode cache) with a fresh, empty ``ENGRAM_HOME`` and an empty project folder as the
working directory, and prints a markdown table of the median wall time, the fastest and slowest
run, and the median CPU time (user + system) of the process, which a busy machine inflates less:

- ``engram --version`` and ``engram --help``: start-up alone;
- ``engram memory list --json``: start-up plus opening the (empty) memory store;
- for reference, the floor on this machine at this moment: this Python doing nothing, and
  importing Typer (which every ``engram`` command needs) and Typer's Rich help formatter (which
  ``--help`` needs).

    .venv/bin/python -m bench.speed.startup --engram .venv/bin/engram --runs 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("--help",),
    ("memory", "list", "--json"),
)
FLOORS: tuple[str, ...] = ("pass", "import typer", "import typer.rich_utils")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    command: list[str], runs: int, env: dict[str, str], cwd: Path
) -> tuple[list[float], list[float]]:
    """Run ``command`` once to warm up, then ``runs`` times; return wall and CPU seconds per run."""
    walls: list[float] = []
    cpus: list[float] = []
    for run in range(runs + 1):
        cpu = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
        if run:
            walls.append(elapsed)
            cpus.append(_children_cpu() - cpu)
    return walls, cpus


def _row(label: str, walls: list[float], cpus: list[float]) -> str:
    return (f"| {label} | {statistics.median(walls):.3f} | {min(walls):.3f} | {max(walls):.3f} | "
            f"{statistics.median(cpus):.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engram", type=Path, default=Path(sys.executable).with_name("engram"),
                        help="The engram executable (default: the one beside this Python).")
    parser.add_argument("--runs", type=int, default=5, help="Measured runs per command.")
    args = parser.parse_args()
    engram = str(args.engram.expanduser().absolute())
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = {**os.environ, "ENGRAM_HOME": str(home)}
        print(f"{engram}: {args.runs} runs per command, load average "
              f"{os.getloadavg()[0]:.1f} at start\n")
        print("| command | wall median s | wall min s | wall max s | CPU median s |")
        print("|---|---|---|---|---|")
        for command in COMMANDS:
            walls, cpus = measure([engram, *command], args.runs, env, project)
            print(_row(f"`engram {' '.join(command)}`", walls, cpus))
        for code in FLOORS:
            walls, cpus = measure([sys.executable, "-c", code], args.runs, env, project)
            print(_row(f"floor: `python -c '{code}'`", walls, cpus))


if __name__ == "__main__":
    main()
