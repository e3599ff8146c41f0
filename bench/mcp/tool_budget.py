"""Tokens the MCP tools' schemas take in every request, bound one by one or behind find_tools.

Starts the test MCP server (``tests.support.mcp_tools_server --many N``) through engram's MCP
client from a temporary project's ``.engram/mcp.json`` (the project run as trusted, as a
project's MCP servers start only then), lists its tools, and counts with
engram's token counter (``graph/tokens.py``, as the budget counts tool schemas):

- every tool bound (what other agents send with each request);
- ``find_tools`` + ``call_tool`` (what engram binds past ``MCP_SCHEMA_SHARE`` of the window);
- one ``find_tools`` answer (eight schemas), paid only when the model looks tools up.

    .venv/bin/python -m bench.mcp.tool_budget --many 60 200 --window 128000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from engram.graph import Context, count_text
from engram.graph.tools import McpToolset, open_mcp_toolset
from engram.graph.tools._mcp import MCP_SCHEMA_SHARE, mcp_tools, schema_tokens

REPO = Path(__file__).resolve().parents[2]


def _toolset(many: int, root: Path) -> tuple[McpToolset, Context, float]:
    project, home = root / f"proj{many}", root / "home"
    (project / ".engram").mkdir(parents=True)
    server = {
        "command": sys.executable,
        "env": {"PYTHONPATH": str(REPO)},
        "args": ["-m", "tests.support.mcp_tools_server", "--many", str(many)],
    }
    (project / ".engram" / "mcp.json").write_text(json.dumps({"mcpServers": {"inv": server}}))
    context = Context(project=str(project), engram_home=str(home), trust_project=True)
    started = time.perf_counter()
    toolset = open_mcp_toolset(context)
    return toolset, context, time.perf_counter() - started


def main() -> None:
    """Print one Markdown table row per server size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--many", type=int, nargs="+", default=[60])
    parser.add_argument("--window", type=int, default=128_000)
    options = parser.parse_args()
    print(
        "| tools | listed in | all bound | find_tools + call_tool | saved per request | "
        "one find_tools answer |"
    )
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for many in options.many:
            toolset, context, seconds = _toolset(many, Path(tmp))
            if toolset.notes:
                raise SystemExit("; ".join(toolset.notes))
            huge = context.replace(context_window=10**9)
            direct = schema_tokens(mcp_tools(toolset, huge, count_text), count_text)
            tiny = context.replace(context_window=1024)
            search = {t.name: t for t in mcp_tools(toolset, tiny, count_text)}
            searched = schema_tokens(list(search.values()), count_text)
            answer = count_text(search["find_tools"].invoke({"query": "stock movement"}))
            share = direct / options.window
            print(
                f"| {len(toolset.specs)} | {seconds:.2f} s | {direct:,} ({share:.1%} of "
                f"{options.window:,}) | {searched:,} | {direct - searched:,} | {answer:,} |"
            )
    print(f"\nbehind find_tools once the schemas pass {MCP_SCHEMA_SHARE:.0%} of the window")


if __name__ == "__main__":
    main()
