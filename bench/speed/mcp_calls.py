"""Latency of ``engram mcp`` tool calls on a large tree, spoken to by the real MCP stdio client.

Starts ``engram mcp --path PROJECT`` once, waits for its tool list, makes one untimed call of
each tool (the first waits for the background load of the indexes), then calls each tool with
every task of the context-latency benchmark (``bench/context/latency.py``) ``--repeat`` times
and prints the p50 / p95 / max per tool and over all calls. The project must be indexed
(``engram index``) with the same ``ENGRAM_HOME``.

    .venv/bin/python -m bench.speed.mcp_calls --project bench/data/Django-5.2 --home DIR \
        [--engram .venv/bin/engram] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "context"))

from latency import TASKS, percentile  # noqa: E402

CALLS: dict[str, Any] = {
    "search_code": lambda task: {"query": task},
    "build_context": lambda task: {"task": task, "budget": 8000},
}
"""The tools timed and the arguments each gets for a task."""


async def measure(command: list[str], env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    """Return each tool's call times in ms."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    async with Client(params) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        missing = set(CALLS) - listed
        if missing:
            sys.exit(f"the server lists no {sorted(missing)}; it lists {sorted(listed)}")
        for name, arguments in CALLS.items():  # warm: the first call waits for the load
            await client.call_tool(name, arguments("warm up the index"))
        for _ in range(repeat):
            for task in TASKS:
                for name, arguments in CALLS.items():
                    started = time.perf_counter()
                    result = await client.call_tool(name, arguments(task))
                    times[name].append((time.perf_counter() - started) * 1000)
                    if result.is_error:
                        sys.exit(f"{name} failed: {result.content}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", required=True)
    parser.add_argument("--home", required=True)
    parser.add_argument("--engram", default=str(Path(sys.executable).with_name("engram")))
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    env = {
        **os.environ,
        "ENGRAM_HOME": args.home,
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    command = [args.engram, "mcp", "--path", str(Path(args.project).resolve())]
    times = asyncio.run(measure(command, env, args.repeat))
    every = [ms for values in times.values() for ms in values]
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| Tool | Calls | p50 ms | p95 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    for name, values in [*times.items(), ("all", every)]:
        print(
            f"| {name} | {len(values)} | {statistics.median(values):.0f} | "
            f"{percentile(values, 0.95):.0f} | {max(values):.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
