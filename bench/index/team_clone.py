"""A teammate's first index of a fresh clone, with the project's vectors warm on a Chroma server.

Usage:
    .venv/bin/python bench/index/team_clone.py REPO [--runs 3] [--provider default]

REPO is a git repository (a folder or anything ``git clone`` takes). Each run starts a fresh
``chroma run`` server (not timed), then times two whole ``index`` processes
(``bench/index/cli.py``, the command ``engram index`` registers, ``--json``):

- **cold**: a clone at one path, a fresh ENGRAM_HOME (empty embedding cache) and an empty
  server: every chunk is embedded;
- **warm**: a second clone at another path with its own fresh ENGRAM_HOME, right after: its
  project identity (the root commit) names the same shared collection, so it embeds only what
  the first did not.

Both use ``ENGRAM_CHROMA_URL``; the embedding table is installed beforehand (not timed). Prints
the medians and the ratio, and the chunks each run embedded and reused.
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
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.index.speed import run_index  # noqa: E402

CHROMA = Path(sys.executable).parent / "chroma"


def start_chroma(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start a Chroma server on a free port; return it and its URL once it answers."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).read()
            return server, url
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the Chroma server did not start")


def one_run(repo: str, provider: str, base: Path) -> tuple[dict, float, dict, float]:
    server, url = start_chroma(base / "chroma")
    os.environ["ENGRAM_CHROMA_URL"] = url
    try:
        first, second = base / "alice" / "clone", base / "bob" / "work" / "clone"
        for target in (first, second):
            subprocess.run(["git", "clone", "-q", repo, str(target)], check=True)
        cold_s, cold = run_index(first, base / "home-alice", provider)
        warm_s, warm = run_index(second, base / "home-bob", provider)
    finally:
        os.environ.pop("ENGRAM_CHROMA_URL", None)
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    return cold, cold_s, warm, warm_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", default="default")
    args = parser.parse_args()
    colds: list[float] = []
    warms: list[float] = []
    for _ in range(args.runs):
        base = Path(tempfile.mkdtemp(prefix="engram-team-"))
        try:
            cold, cold_s, warm, warm_s = one_run(args.repo, args.provider, base)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        colds.append(cold_s)
        warms.append(warm_s)
        print(
            f"cold {cold_s:.2f}s (embedded {cold['embedded']}, chunks {cold['chunks']}) · "
            f"warm {warm_s:.2f}s (embedded {warm['embedded']}, reused {warm['reused']})",
            flush=True,
        )
    cold_m, warm_m = statistics.median(colds), statistics.median(warms)
    print(
        f"| {Path(args.repo.rstrip('/')).name} | {cold['files']} | {cold['chunks']} | "
        f"{args.runs} | {cold_m:.2f} | {warm_m:.2f} | {warm_m / cold_m:.2f} |"
    )


if __name__ == "__main__":
    main()
