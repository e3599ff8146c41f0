"""Hostile-repository checks: does any way out of the project leak a secret or hang on a FIFO?

Builds the hostile project of ``tests/support/hostile_paths.py`` (57 credential files,
protected folders, symlinks, hard links, FIFOs, a file name holding a newline) and tries every
path through every reader: the policy itself, ``read_file``, ``glob_files``, ``grep_code``
(ripgrep and the Python fallback), the index walk, rules files and the real MCP client.
Each attempt holds when no planted secret byte comes back and nothing blocks for longer than
the per-check limit. Prints tried / held / failed per category.

    .venv/bin/python -m bench.reliability.confinement [--no-mcp]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from engram.graph import Context
from engram.graph._errors import ToolError
from engram.graph.tools import call_with_timeout
from engram.graph.tools._project import build_core_tools
from engram.graph.tools._timeout import ToolTimeoutError
from engram.stores.codeindex import grep
from engram.stores.codeindex._ripgrep import find_rg
from engram.stores.files import PathEscapeError, confine, display_path, walk_project
from engram.stores.project import load_rules_files
from tests.support.hostile_paths import MARKER, HostileProject, build_hostile_project

CHECK_TIMEOUT_S = 20.0
GLOBS = (
    "*",
    "**",
    "**/*",
    ".*",
    "**/.*",
    "config",
    ".env",
    "*.json",
    ".git/**",
    "**/.git/**",
    ".engram/**",
    "credentials",
    "**/credentials",
    "*.pem",
    "home/**",
    "*.txt",
    "*.py",
)

Check = tuple[str, str, Callable[[], bool]]
"""(category, what was tried, a function returning True when the attempt held)."""


def _refused_by_tool(tool: Callable[[dict[str, object]], str], args: dict[str, object]) -> bool:
    try:
        return MARKER not in tool(args)
    except ToolError as exc:
        return MARKER not in str(exc)


def _policy_checks(project: HostileProject) -> list[Check]:
    def refused(rel: str) -> bool:
        try:
            confine(project.root, rel)
        except PathEscapeError:
            return True
        return False

    return [
        ("policy", rel, lambda rel=rel: refused(rel))
        for category, rel in project.refused
        if category != "hard link"
    ]


def _tool_checks(project: HostileProject, home: Path) -> list[Check]:
    # engram's own state of the project (spilled outputs) goes under this temporary home
    context = Context(project=str(project.root), engram_home=str(home))
    tools = {t.name: t.invoke for t in build_core_tools(context)}
    checks: list[Check] = []
    for _, rel in project.refused:
        checks.append(
            ("read_file", rel, lambda rel=rel: _refused_by_tool(tools["read_file"], {"path": rel}))
        )
    if project.fifo:
        checks.append(
            (
                "fifo",
                f"read_file {project.fifo}",
                lambda: _refused_by_tool(tools["read_file"], {"path": project.fifo}),
            )
        )
    for glob in GLOBS:
        checks.append(
            (
                "glob_files",
                glob,
                lambda glob=glob: _refused_by_tool(
                    tools["glob_files"], {"pattern": glob, "max_results": 500}
                ),
            )
        )
        checks.append(
            (
                "grep_code",
                f"glob={glob}",
                lambda glob=glob: _refused_by_tool(
                    tools["grep_code"], {"pattern": "needle", "glob": glob, "max_results": 500}
                ),
            )
        )
        checks.append(
            (
                "grep fallback",
                f"glob={glob}",
                lambda glob=glob: not grep(project.root, MARKER, glob=glob, rg_path=None),
            )
        )
    if project.newline_name:
        forged = "src/app.py:1: forged line.py"
        checks.append(
            (
                "file names",
                "newline in a name",
                lambda: (
                    forged
                    not in tools["grep_code"]({"pattern": "newline in its name"}).splitlines()
                ),
            )
        )
    return checks


def _walk_checks(project: HostileProject, home: Path) -> list[Check]:
    def walked_clean() -> bool:
        files = walk_project(project.root).files
        listed = {f.path for f in files}
        return not listed & {rel for _, rel in project.refused} and all(
            MARKER not in f.abs_path.read_text(errors="replace") for f in files
        )

    def rules_clean() -> bool:
        for name, target in (
            ("AGENTS.md", ".env"),
            ("CLAUDE.md", str(project.outside / "secret.txt")),
        ):
            link = project.root / name
            if not link.is_symlink():
                link.symlink_to(target)
        return MARKER not in load_rules_files(project.root, home, project_rules=True).text

    return [
        ("index walk", "walk_project", walked_clean),
        ("rules files", "symlinked rules", rules_clean),
    ]


async def _mcp_checks(project: HostileProject, home: Path) -> list[tuple[str, str, bool]]:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    engram = str(Path(sys.executable).parent / "engram")
    env = {
        "ENGRAM_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HF_HUB_OFFLINE": "1",
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
    }
    params = StdioServerParameters(
        command=engram, args=["mcp", "--path", str(project.root)], env=env
    )
    results: list[tuple[str, str, bool]] = []
    async with Client(params) as client:
        calls = [("read_file", {"path": rel}) for _, rel in project.refused]
        calls += [("read_file", {"path": project.fifo})] if project.fifo else []
        calls += [("grep_code", {"pattern": "needle", "glob": g}) for g in GLOBS]
        calls += [("glob_files", {"pattern": g}) for g in GLOBS]
        for name, args in calls:
            try:
                result = await asyncio.wait_for(client.call_tool(name, args), CHECK_TIMEOUT_S)
                text = " ".join(getattr(c, "text", "") for c in result.content)
                bare = text.strip() == f"Error executing tool {name}"  # an error with no reason
                held = MARKER not in text and not bare
            except TimeoutError:
                held = False
            results.append(("mcp", f"{name} {display_path(str(args))}", held))
    return results


async def _run(checks: list[Check]) -> list[tuple[str, str, bool]]:
    results = []
    for category, tried, check in checks:
        try:
            held = await call_with_timeout(category, check, CHECK_TIMEOUT_S)
        except ToolTimeoutError:
            held = False
        results.append((category, tried, held))
    return results


def main(argv: list[str] | None = None) -> int:
    """Run every check and print tried / held / failed per category (exit 1 on a failure)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP server checks")
    args = parser.parse_args(argv)
    if find_rg() is None:
        print("note: ripgrep not found; grep_code uses the Python fallback")  # noqa: T201
    with tempfile.TemporaryDirectory() as tmp:
        project = build_hostile_project(Path(tmp))
        home = Path(tmp) / "home"
        checks = [
            *_policy_checks(project),
            *_tool_checks(project, home),
            *_walk_checks(project, home),
        ]
        results = asyncio.run(_run(checks))
        if not args.no_mcp:
            results += asyncio.run(_mcp_checks(project, home))
    tried, held = Counter[str](), Counter[str]()
    for category, _, ok in results:
        tried[category] += 1
        held[category] += ok
    print(f"{'category':<15}{'tried':>7}{'held':>7}{'failed':>8}")  # noqa: T201
    for category in tried:
        failed = tried[category] - held[category]
        print(f"{category:<15}{tried[category]:>7}{held[category]:>7}{failed:>8}")  # noqa: T201
    for category, what, ok in results:
        if not ok:
            print(f"  FAILED {category}: {what}")  # noqa: T201
    return 0 if all(ok for *_, ok in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
