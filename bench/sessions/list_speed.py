"""How long `engram sessions list` takes with many checkpoints, against the generic walk.

Builds ``checkpoints.sqlite`` in a temporary ``ENGRAM_HOME``: ``--threads`` sessions of one
project, ``--checkpoints`` checkpoints each, every checkpoint holding a realistic message list
(alternating user/assistant turns of ~400 characters). Then, median over ``--runs``:

- the whole ``engram sessions list --json`` process (start-up included);
- in process, ``session_rows`` (one SQL query) against the generic ``BaseCheckpointSaver.list``
  walk it replaced, on the same database.

    .venv/bin/python -m bench.sessions.list_speed --threads 300 --checkpoints 8 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from engram.stores.project import project_key
from engram.stores.sqlite import CHECKPOINT_DB, session_rows, sqlite_connect
from engram.stores.sqlite._backends import ThreadedSqliteSaver
from engram.stores.sqlite._session_listing import generic_session_rows

TEXT = "The parser keeps a stack of open scopes and closes them at each dedent token. " * 5


def build(home: Path, project: str, threads: int, checkpoints: int) -> None:
    saver = ThreadedSqliteSaver(sqlite_connect(home / CHECKPOINT_DB))
    saver.setup()
    for t in range(threads):
        parent = None
        messages: list = []
        for step in range(checkpoints):
            messages = [*messages, HumanMessage(TEXT), AIMessage(TEXT)]
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": messages}
            config = {"configurable": {"thread_id": f"s{t:04d}", "checkpoint_ns": ""}}
            if parent:
                config["configurable"]["checkpoint_id"] = parent
            meta = {"project": project, "title": f"task {t}", "step": step, "source": "loop"}
            parent = saver.put(config, checkpoint, meta, {})["configurable"]["checkpoint_id"]
    saver.conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--checkpoints", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    engram = Path(sys.executable).with_name("engram")
    with tempfile.TemporaryDirectory() as tmp:
        home, folder = Path(tmp) / "home", Path(tmp) / "project"
        folder.mkdir()
        build(home, project_key(folder), args.threads, args.checkpoints)
        env = {**os.environ, "ENGRAM_HOME": str(home)}
        whole = []
        for _ in range(args.runs):
            started = time.perf_counter()
            out = subprocess.run(
                [engram, "sessions", "list", "--json", "--path", folder],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            whole.append(time.perf_counter() - started)
        listed = json.loads(out)
        assert len(listed) == args.threads, len(listed)
        saver = ThreadedSqliteSaver(sqlite_connect(home / CHECKPOINT_DB))
        fast, generic = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            rows = session_rows(saver, project_key(folder))
            fast.append(time.perf_counter() - started)
            started = time.perf_counter()
            walked = generic_session_rows(saver)
            generic.append(time.perf_counter() - started)
        assert len(rows) == len(walked) == args.threads
        saver.conn.close()
    fast_s, generic_s = statistics.median(fast), statistics.median(generic)
    print(
        json.dumps(
            {
                "threads": args.threads,
                "checkpoints": args.threads * args.checkpoints,
                "cli_whole_process_s": round(statistics.median(whole), 3),
                "session_rows_s": round(fast_s, 4),
                "generic_walk_s": round(generic_s, 3),
                "speed-up": round(generic_s / fast_s, 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
