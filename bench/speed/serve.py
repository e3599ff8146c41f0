"""``engram serve``: whole-process wall times of forwarded commands, warm server against none.

On an indexed copy of ``--repo`` (``git archive HEAD`` plus ``git init``, indexed once before
timing, in a fresh ENGRAM_HOME), runs each command ``--runs`` times alternately with a warm
server running and with ``ENGRAM_SERVE=off`` (today's in-process path), and prints a markdown
table of medians and their ratio:

- ``engram context TASK --budget 8000``, ``engram search Q``, ``engram search --files Q``;
- ``engram search Q`` with no server running, forwarding on (it runs in-process and starts a
  server in the background as it exits), against the same command with ``ENGRAM_SERVE=off``
  (three runs of each; the server each one starts is stopped once it answers);
- ``watch``: seconds from writing a new file with a fresh name to the first ``engram search``
  that finds it (searching back to back);
- the server's resident memory with the copy open, and with a second copy open too.

    .venv/bin/python -m bench.speed.serve --runs 5 [--repo PATH] [--engram .venv/bin/engram]

With ``--tree PATH`` (a folder that need not be a git checkout, e.g. the Django sdist) the copy
is of that folder as it is, ``--task``, ``--query`` and ``--watch-dir`` (the folder, relative
to the tree, where the watcher test writes its new file) fit it, and the second project of the
memory row is the copy of ``--repo``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTEXT_TASK = "fix the check that confines file paths to the project"
QUERY = "confine a path to the project root"
START_TIMEOUT_S = 120.0
FIRST_RUNS = 3
"""Runs of the first command with no server (each waits for the server it starts, then stops it)."""


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Run ``command`` once and return its wall time (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def indexed_copy(engram: str, repo: Path, folder: Path, env: dict[str, str]) -> Path:
    """Copy HEAD of ``repo`` into ``folder`` as a git checkout and index it."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", "HEAD"], capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    quiet = {"capture_output": True, "check": True}
    subprocess.run(["git", "init", "-q"], cwd=folder, **quiet)  # type: ignore[call-overload]
    subprocess.run(["git", "add", "-A"], cwd=folder, **quiet)  # type: ignore[call-overload]
    ident = ["-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    subprocess.run(["git", *ident, "commit", "-qm", "copy"], cwd=folder, **quiet)  # type: ignore[call-overload]
    timed([engram, "index", str(folder)], {**env, "ENGRAM_SERVE": "off"}, folder)
    return folder


def server_status(engram: str, env: dict[str, str]) -> dict:
    """Return ``engram serve --status --json`` (``running`` False when none answers)."""
    import json

    done = subprocess.run([engram, "serve", "--status", "--json"], env=env, capture_output=True)
    return json.loads(done.stdout or b"{}") if done.returncode == 0 else {}


def wait_for_server(engram: str, env: dict[str, str]) -> dict:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = server_status(engram, env)
        if found.get("running"):
            return found
        time.sleep(0.2)
    raise SystemExit("the server did not start")


def indexed_tree(engram: str, tree: Path, folder: Path, env: dict[str, str]) -> Path:
    """Copy ``tree`` as it is (links kept as links) into ``folder`` and index it."""
    shutil.copytree(tree, folder, symlinks=True)
    timed([engram, "index", str(folder)], {**env, "ENGRAM_SERVE": "off"}, folder)
    return folder


def watch_latency(
    engram: str, env: dict[str, str], project: Path, attempt: int, folder: str = "engram"
) -> float:
    """Write a new function and search for it until found; return the seconds it took."""
    name = f"freshly_saved_function_{attempt}_{os.getpid()}"
    path = project / folder / f"bench_saved_{attempt}.py"
    written = time.perf_counter()
    path.write_text(f"def {name}():\n    return {attempt}\n")
    try:
        while time.perf_counter() - written < 30:
            done = subprocess.run(
                [engram, "search", name, "--json", "-k", "1"],
                env=env,
                cwd=project,
                capture_output=True,
            )
            if path.name.encode() in done.stdout:
                return time.perf_counter() - written
        raise SystemExit(f"{name} was not found in 30 s")
    finally:
        path.unlink()


def row(label: str, warm: list[float], cold: list[float]) -> str:
    """One table row: medians in seconds and their ratio."""
    w, c = statistics.median(warm), statistics.median(cold)
    return f"| {label} | {w:.3f} | {c:.3f} | {w / c:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engram", default=str(Path(sys.executable).with_name("engram")))
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path, help="time on a copy of this folder instead")
    parser.add_argument("--task", default=CONTEXT_TASK)
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--watch-dir", default="engram")
    args = parser.parse_args()
    engram = args.engram
    with tempfile.TemporaryDirectory(prefix="engram-serve-bench-") as tmp:
        home = Path(tmp) / "home"
        # a relative PYTHONPATH (``PYTHONPATH=.`` to run this module) would import the copy's
        # own ``engram`` package in the commands run inside the copy
        env = {k: v for k, v in os.environ.items() if k not in ("ENGRAM_SERVE", "PYTHONPATH")}
        env["ENGRAM_HOME"] = str(home)
        off = {**env, "ENGRAM_SERVE": "off"}
        if args.tree is not None:
            project = indexed_tree(engram, args.tree, Path(tmp) / "project", env)
        else:
            project = indexed_copy(engram, args.repo, Path(tmp) / "project", env)
        commands = {
            "context --budget 8000": [engram, "context", args.task, "--budget", "8000"],
            "search": [engram, "search", args.query],
            "search --files": [engram, "search", "--files", args.query],
        }
        first_warm, first_cold = [], []
        for _ in range(FIRST_RUNS):
            first_cold.append(timed(commands["search"], off, project))
            first_warm.append(timed(commands["search"], env, project))  # no server: starts one
            wait_for_server(engram, env)
            subprocess.run([engram, "serve", "--stop"], env=env, capture_output=True)
        timed(commands["search"], env, project)
        wait_for_server(engram, env)
        for command in commands.values():  # each opens what it needs once
            timed(command, env, project)
        lines = [
            "| command | warm server (s) | ENGRAM_SERVE=off (s) | ratio |",
            "| --- | ---: | ---: | ---: |",
        ]
        for label, command in commands.items():
            warm, cold = [], []
            for _ in range(args.runs):
                warm.append(timed(command, env, project))
                cold.append(timed(command, off, project))
            lines.append(row(label, warm, cold))
        lines.append(row("first search, no server running", first_warm, first_cold))
        latencies = [
            watch_latency(engram, env, project, n, args.watch_dir) for n in range(args.runs)
        ]
        one = wait_for_server(engram, env)["rss_mb"]
        second = indexed_copy(engram, args.repo, Path(tmp) / "second", env)
        timed(commands["context --budget 8000"], env, second)
        two = wait_for_server(engram, env)["rss_mb"]
        subprocess.run([engram, "serve", "--stop"], env=env, capture_output=True)
    print("\n".join(lines))
    print()
    print(
        f"saved file found by search: median {statistics.median(latencies):.2f} s "
        f"(max {max(latencies):.2f} s, {len(latencies)} writes)"
    )
    print(f"server resident memory: {one:.0f} MB with one project open, {two:.0f} MB with two")


if __name__ == "__main__":
    main()
