"""Measure the snapshot overhead per approved write: median ms and bytes stored.

A copy of engram's own source files is the project, once as a git repository and once as a
plain folder. Each of ``--writes`` edits runs as one tool step does: a snapshot before the
write and one after, logged. The bytes are the growth of git's object store and engram's
snapshot folder (its objects, private index and log, in the project's state folder under a
temporary ``ENGRAM_HOME``), divided by the writes.

Usage: ``.venv/bin/python -m bench.rewind.bench_snapshots [--writes 30]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from engram.graph.tools import ActionSnapshots
from engram.stores.files import write_atomically
from engram.stores.project import ProjectState

SOURCE_DIRS = ("engram/graph", "engram/nodes", "engram/stores", "studio", "tests")


def folder_bytes(*folders: Path) -> int:
    """Return the bytes of the files under ``folders`` (missing ones count 0)."""
    return sum(p.stat().st_size for f in folders if f.exists() for p in f.rglob("*") if p.is_file())


def _make_project(root: Path, git: bool) -> list[Path]:
    repo = Path(__file__).resolve().parents[2]
    for name in SOURCE_DIRS:
        shutil.copytree(
            repo / name,
            root / name,
            symlinks=False,
            ignore=shutil.ignore_patterns("__pycache__", "data"),
        )
    if git:
        for args in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"],
        ):
            subprocess.run(["git", *args], cwd=root, check=True)
    return sorted(root.rglob("*.py"))


def measure(git: bool, writes: int) -> dict[str, float | int | str]:
    """Run ``writes`` snapshotted edits on a fresh project; return the figures."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as home:
        root = Path(tmp).resolve()
        state = ProjectState(root, Path(home).resolve())
        files = _make_project(root, git)
        ActionSnapshots(state, "warm", None).before()  # the first snapshot hashes everything
        stores = (root / ".git" / "objects", state.path("snapshots"))
        size_before = folder_bytes(*stores)
        times: list[float] = []
        for index in range(writes):
            target = files[(index * 7) % len(files)]
            started = time.perf_counter()
            step = ActionSnapshots(state, "bench", f"checkpoint-{index}")
            before = step.before()
            write_atomically(target, target.read_bytes() + f"# edit {index}\n".encode())
            step.after("edit_file", before)
            times.append((time.perf_counter() - started) * 1000)
            assert not step.notes, step.notes
        return {
            "mode": "git" if git else "plain",
            "files": len(list(root.rglob("*.py"))),
            "writes": writes,
            "median_ms": round(statistics.median(times), 1),
            "p90_ms": round(sorted(times)[int(0.9 * len(times))], 1),
            "bytes_per_write": (folder_bytes(*stores) - size_before) // writes,
        }


def main() -> None:
    """Print one JSON line per mode."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args()
    for git in (True, False):
        print(json.dumps(measure(git, args.writes)))  # noqa: T201


if __name__ == "__main__":
    main()
