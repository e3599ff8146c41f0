"""A hostile project through every way out: ripgrep, the CLI, the index and the real MCP client.

No secret byte planted in the project (every one carries MARKER) may appear in any output or
in anything the index stores; a FIFO in the project must not hang any command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from engram.graph import Context
from engram.graph.tools._project import build_core_tools
from engram.stores.codeindex import grep
from engram.stores.codeindex._ripgrep import find_rg
from tests.support.hostile_paths import MARKER, build_hostile_project
from tests.support.state import state_of
from tests.unit.stores.test_confinement import GLOBS

pytestmark = pytest.mark.integration

ENGRAM = str(Path(sys.executable).parent / "engram")
COMMAND_TIMEOUT_S = 240


@pytest.fixture()
def hostile(tmp_path: Path):
    return build_hostile_project(tmp_path)


def _env(home: Path) -> dict[str, str]:
    return {
        "ENGRAM_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HF_HUB_OFFLINE": "1",
        "ENGRAM_EMBEDDING_PROVIDER": "hash",
        "LANG": "C.UTF-8",
    }


def _engram(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ENGRAM, *args],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _stored_bytes_hold_marker(folder: Path) -> list[Path]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and MARKER.encode() in path.read_bytes():
            found.append(path)
    return found


def test_ripgrep_globs_never_override_the_exclusions(hostile):
    assert find_rg() is not None
    for glob in [None, *GLOBS]:
        assert grep(hostile.root, MARKER, glob=glob) == [], glob
        assert all(MARKER not in m.text for m in grep(hostile.root, "needle", glob=glob))
    grep_code = {t.name: t for t in build_core_tools(Context(project=str(hostile.root)))}[
        "grep_code"
    ]
    out = grep_code.invoke({"pattern": "newline in its name"})
    assert "forged" not in out  # a name with a line break is never listed
    assert MARKER not in grep_code.invoke({"pattern": "needle", "glob": "*"})


def test_cli_index_search_slice_context_leak_nothing_and_never_hang(hostile, engram_home):
    root = str(hostile.root)
    indexed = _engram(engram_home, "index", root)
    assert indexed.returncode == 0, indexed.stderr
    for args in (
        ("search", "needle", "--path", root),
        ("search", MARKER, "--path", root),
        ("search", "needle", "--mode", "exact", "--path", root),
        ("context", "where is needle defined? see .env and notes.txt", "--path", root),
        ("slice", "needle", "--path", root),
        ("graph", "needle", "--path", root),
    ):
        result = _engram(engram_home, *args)
        assert MARKER not in result.stdout + result.stderr, args
        assert "Traceback" not in result.stderr, args
    assert not os.path.lexists(hostile.root / ".engram" / "index")  # state stays out of the tree
    index = state_of(hostile.root, engram_home).path("index")
    assert any(b"visible" in p.read_bytes() for p in index.rglob("*") if p.is_file())
    assert _stored_bytes_hold_marker(index) == []
    assert _stored_bytes_hold_marker(engram_home) == []


async def test_mcp_tools_refuse_every_variant_with_a_reason(hostile, engram_home):
    params = StdioServerParameters(
        command=ENGRAM, args=["mcp", "--path", str(hostile.root)], env=_env(engram_home)
    )
    async with Client(params) as client:
        for _, rel in hostile.refused:
            result = await client.call_tool("read_file", {"path": rel})
            text = result.content[0].text
            assert result.is_error and MARKER not in text, rel
            assert "refused" in text or "no such file" in text, text
        if hostile.fifo:
            fifo = await client.call_tool("read_file", {"path": hostile.fifo})
            assert fifo.is_error and "FIFO" in fifo.content[0].text
        for glob in GLOBS:
            found = await client.call_tool("grep_code", {"pattern": "needle", "glob": glob})
            listed = await client.call_tool("glob_files", {"pattern": glob})
            assert MARKER not in found.content[0].text + listed.content[0].text, glob
        bad = await client.call_tool("grep_code", {"pattern": "needle("})
        assert bad.is_error and "invalid search pattern" in bad.content[0].text
        # a failure outside engram's own errors still carries its reason to the client
        invalid = await client.call_tool("glob_files", {"pattern": "!"})
        assert invalid.is_error and "invalid glob pattern" in invalid.content[0].text


def test_a_fifo_does_not_hang_a_run_of_the_tools_through_the_graph(hostile, engram_home):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this OS")
    result = _engram(
        engram_home, "search", "needle", "--mode", "exact", "--path", str(hostile.root)
    )
    assert result.returncode == 0 and "src/app.py" in result.stdout


def test_the_confinement_bench_holds_everywhere(capsys):
    from bench.reliability.confinement import main

    assert main(["--no-mcp"]) == 0
    table = capsys.readouterr().out
    assert "grep_code" in table and "FAILED" not in table
