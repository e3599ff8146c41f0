"""How long the ``engram`` command takes to start: whole-process wall time of cheap commands.

Runs each command ``--runs`` times (after one unmeasured warm-up run that fills the page cache
and the bytecode cache, kept in a temporary ``PYTHONPYCACHEPREFIX``) with a fresh, empty ``ENGRAM_HOME`` and an empty project folder as the
working directory, and prints a markdown table of the median wall time, the fastest and slowest
run, and the median CPU time (user + system) of the process, which a busy machine inflates less:

- ``engram --version`` and ``engram --help``: start-up alone;
- ``engram memory list --json``: start-up plus opening the (empty) memory store;
- ``engram search "def confine" --mode exact`` over ``--repo`` (default: this repository), and
  the same search by ``rg`` alone;
- ``engram search Q`` (hybrid: BM25, dense and exact) and ``engram context TASK --budget
  8000`` over an indexed copy of ``--repo`` (``git archive HEAD``, indexed once by each engram
  before timing, so the index is warm on disk and each engram reads an index it built);
- ``engram mcp``: from starting the server to its answer to the first ``tools/list``, spoken
  to by the real MCP client over stdio (initialise, then list; no CPU column: the server's
  time is not the client's child time until it exits);
- ``engram run`` (``--only run``): cold runs against the HTTP OpenAI stub
  (``tests/support/openai_stub.py``) on the indexed copy; the table adds how many runs' first
  turn noted a retrieval branch that "timed out";
- for reference, the floor on this machine at this moment: this Python doing nothing,
  importing Typer (which every ``engram`` command needs), Typer's Rich help formatter (which
  ``--help`` needs), Typer's Pydantic coercion of option values (which every command given a
  value needs) and the MCP library's server (which ``engram mcp`` needs).

With ``--baseline OTHER_ENGRAM`` (another checkout's ``engram``) every engram command runs
alternately with the baseline, and the table adds the baseline's median and the ratio
this/baseline: on a shared machine only figures from the same run compare.

    .venv/bin/python -m bench.speed.startup --engram .venv/bin/engram --runs 5 \
        [--baseline /path/to/other/.venv/bin/engram] [--only mcp search hybrid context run]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from bench._env import serve_off

EXACT_QUERY = "def confine"
HYBRID_QUERY = "confine a path to the project root"
CONTEXT_TASK = "fix the check that confines file paths to the project"
RUN_TASK = "where are file paths confined to the project?"
PROJECT = "PROJECT"
"""Stands for the engram's own indexed copy of the repository in a command."""
REPO = Path(__file__).resolve().parents[2]
INDEXED = ("hybrid", "context", "run")
"""Commands that need an indexed project."""
FLOORS: tuple[str, ...] = (
    "pass",
    "import typer",
    "import typer.rich_utils",
    "import typer._adapters",
    "import mcp.server.mcpserver",
)

Sample = tuple[float, float | None]
"""Wall seconds and CPU seconds (None when the process's CPU time is not measurable)."""


def commands(repo: Path) -> dict[str, tuple[str, ...]]:
    """Return the measured engram commands by short name."""
    return {
        "version": ("--version",),
        "help": ("--help",),
        "memory": ("memory", "list", "--json"),
        "search": ("search", EXACT_QUERY, "--mode", "exact", "--path", str(repo)),
        "hybrid": ("search", HYBRID_QUERY, "--path", PROJECT),
        "context": ("context", CONTEXT_TASK, "--budget", "8000", "--path", PROJECT),
        "mcp": ("mcp",),
        "run": ("run", RUN_TASK, "--json", "--yes", "--path", PROJECT),
    }


def bench_env(home: Path, pycache: Path) -> dict[str, str]:
    """Return the measured processes' environment: this one, an empty home, a bytecode cache.

    The warm-up run writes every module's bytecode under ``pycache`` (even when this shell
    sets ``PYTHONDONTWRITEBYTECODE``, and without writing into the checkouts measured), so no
    measured run compiles source, as none does on an installation that has run once.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return serve_off(
        {
            **env,
            "ENGRAM_HOME": str(home),
            "HF_HUB_OFFLINE": "1",
            "PYTHONPYCACHEPREFIX": str(pycache),
        }
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[Sample, str]:
    """Run ``command`` to its end; return its wall and CPU seconds, and its stdout."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        command,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return (elapsed, _children_cpu() - cpu), done.stdout


def run_process(command: list[str], env: dict[str, str], cwd: Path) -> Sample:
    """Run ``command`` to its end; return its wall and CPU seconds."""
    return _timed_run(command, env, cwd)[0]


def timed_out(stdout: str) -> bool:
    """Return True when an ``engram run --json`` summary notes a timed-out retrieval step."""
    return any("timed out" in note for note in json.loads(stdout).get("notes", []))


def run_cold(command: list[str], env: dict[str, str], cwd: Path, timeouts: list[bool]) -> Sample:
    """Run ``engram run`` to its end; note in ``timeouts`` whether a branch timed out."""
    sample, stdout = _timed_run(command, env, cwd)
    timeouts.append(timed_out(stdout))
    return sample


def indexed_copy(engram: str, repo: Path, folder: Path, env: dict[str, str]) -> Path:
    """Return a copy of ``repo``'s committed files in ``folder``, indexed by ``engram``."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "HEAD"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    run_process([engram, "index", str(folder)], env, folder)
    return folder


def run_mcp(command: list[str], env: dict[str, str], cwd: Path) -> Sample:
    """Start an MCP server with the real stdio client; return seconds to the first tool list."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)

    async def first_list() -> float:
        started = time.perf_counter()
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            elapsed = time.perf_counter() - started
        if not tools:
            sys.exit(f"{' '.join(command)} listed no tools")
        return elapsed

    return asyncio.run(first_list()), None


def measure(runner: Callable[[], Sample], runs: int) -> list[Sample]:
    """Run once to warm up, then ``runs`` times; return the measured samples."""
    runner()
    return [runner() for _ in range(runs)]


def _median(samples: list[Sample], part: int) -> float | None:
    values = [s[part] for s in samples if s[part] is not None]
    return statistics.median(values) if values else None  # type: ignore[type-var]


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _row(label: str, samples: list[Sample], baseline: list[Sample] | None = None) -> str:
    walls = [s[0] for s in samples]
    cells = [
        label,
        _seconds(_median(samples, 0)),
        _seconds(min(walls)),
        _seconds(max(walls)),
        _seconds(_median(samples, 1)),
    ]
    if baseline is not None:
        before = _median(baseline, 0) or 0.0
        after = _median(samples, 0) or 0.0
        cells += [
            _seconds(before) if baseline else "–",
            _seconds(_median(baseline, 1)) if baseline else "–",
            f"{after / before:.2f}" if baseline and before else "–",
        ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engram",
        type=Path,
        default=Path(sys.executable).with_name("engram"),
        help="The engram executable (default: the one beside this Python).",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="Another engram executable, run alternately for comparison.",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=REPO,
        help="Project searched and indexed (default: this repository).",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="Measure only these: version help memory search hybrid context mcp "
        "run (run only when named).",
    )
    parser.add_argument("--runs", type=int, default=5, help="Measured runs per command.")
    args = parser.parse_args()
    engram = str(args.engram.expanduser().absolute())
    baseline = str(args.baseline.expanduser().absolute()) if args.baseline else None
    repo = args.repo.expanduser().absolute()
    chosen = {
        name: cmd
        for name, cmd in commands(repo).items()
        if (name in args.only if args.only is not None else name != "run")
    }
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = bench_env(home, Path(tmp) / "pycache")
        copies: dict[str, Path] = {}
        if any(name in INDEXED for name in chosen):
            for number, program in enumerate(filter(None, (engram, baseline))):
                copies[program] = indexed_copy(program, repo, Path(tmp) / f"indexed{number}", env)
        print(
            f"{engram}: {args.runs} runs per command, load average "
            f"{os.getloadavg()[0]:.1f} at start"
            + (f"; baseline {baseline}" if baseline else "")
            + "\n"
        )
        header = "| command | wall median s | wall min s | wall max s | CPU median s |"
        if baseline:
            header += " baseline wall median s | baseline CPU median s | ratio |"
        print(header)
        print("|---" * header.count(" |") + "|")
        with ExitStack() as stack:
            if "run" in chosen:
                from tests.support.openai_stub import OpenAIStub

                stub = stack.enter_context(
                    OpenAIStub(lambda body: {"content": "They are confined in stores/paths.py."})
                )
                env.update(
                    {
                        "ENGRAM_MODEL": "stub-model",
                        "ENGRAM_BASE_URL": stub.base_url,
                        "OPENAI_API_KEY": "stub",
                    }
                )
            notes = [
                _measure_command(
                    name, command, engram, baseline, copies, env, project, repo, args.runs
                )
                for name, command in chosen.items()
            ]
        if "search" in chosen:
            rg = str(Path(sys.executable).with_name("rg"))
            rg_samples = measure(
                partial(
                    run_process, [rg, "-n", "--no-messages", EXACT_QUERY, str(repo)], env, project
                ),
                args.runs,
            )
            print(
                _row(f"floor: `rg -n '{EXACT_QUERY}' REPO`", rg_samples, [] if baseline else None)
            )
        for code in FLOORS:
            samples = measure(
                partial(run_process, [sys.executable, "-c", code], env, project), args.runs
            )
            print(_row(f"floor: `python -c '{code}'`", samples, [] if baseline else None))
    print("".join(f"\n{note}" for note in notes if note))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


def _measure_command(
    name: str,
    command: tuple[str, ...],
    engram: str,
    baseline: str | None,
    copies: dict[str, Path],
    env: dict[str, str],
    project: Path,
    repo: Path,
    runs: int,
) -> str:
    """Measure one command (alternately with the baseline), print its table row, return a note."""
    label = f"`engram {shlex.join(command)}`".replace(str(repo), "REPO")
    timeouts: dict[str, list[bool]] = {}

    def runner(program: str) -> Callable[[], Sample]:
        argv = [program, *(str(copies[program]) if part == PROJECT else part for part in command)]
        if name == "run":
            return partial(run_cold, argv, env, project, timeouts.setdefault(program, []))
        return partial(run_mcp if name == "mcp" else run_process, argv, env, project)

    warm_up = name != "run"  # every `engram run` is a cold process: none is thrown away
    this = runner(engram)
    if baseline is None:
        print(_row(label, measure(this, runs) if warm_up else [this() for _ in range(runs)]))
    else:
        other = runner(baseline)
        if warm_up:
            this(), other()
        pairs = [(this(), other()) for _ in range(runs)]  # alternated
        print(_row(label, [p[0] for p in pairs], [p[1] for p in pairs]))
    if name != "run":
        return ""
    counts = [f"{sum(flags)} of {len(flags)}" for flags in timeouts.values()]
    return f"`engram run`: runs whose first turn noted a timed-out branch: {counts[0]}" + (
        f" (baseline {counts[1]})" if baseline else ""
    )


if __name__ == "__main__":
    main()
