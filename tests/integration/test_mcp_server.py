"""`engram mcp` spoken to by the real MCP client over stdio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.integration


async def test_stdio_server_lists_and_runs_tools(tmp_path: Path, engram_home: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "auth.py").write_text("def check_token(token):\n    return token == 'x'\n")
    (project / ".env").write_text("SECRET=check_token\n")
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "engram"),
        args=["mcp", "--path", str(project)],
        env={"ENGRAM_HOME": str(engram_home), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"read_file", "glob_files", "grep_code"} <= names
        found = await client.call_tool("grep_code", {"pattern": "check_token"})
        assert not found.is_error
        text = found.content[0].text
        assert "auth.py:1: def check_token(token):" in text and ".env" not in text
        read = await client.call_tool("read_file", {"path": "auth.py", "start_line": 2})
        assert "return token == 'x'" in read.content[0].text
        refused = await client.call_tool("read_file", {"path": "../outside.txt"})
        assert refused.is_error and "outside the project" in refused.content[0].text
        assert {"build_context", "search_memory", "search_code", "code_graph"} <= names
        pack = await client.call_tool(
            "build_context", {"task": "fix check_token in auth.py", "budget": 2000}
        )
        assert not pack.is_error
        assert "auth.py" in pack.content[0].text
        memory = await client.call_tool("search_memory", {"query": "token"})
        assert not memory.is_error


def _server(project: Path, home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(Path(sys.executable).parent / "engram"),
        args=["mcp", "--path", str(project)],
        env={"ENGRAM_HOME": str(home), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )


async def test_memory_tools_use_the_store_opened_after_the_tool_list(
    tmp_path: Path, engram_home: Path
):
    project = tmp_path / "proj"
    project.mkdir()
    async with Client(_server(project, engram_home)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[-3:] == ["save_memory", "build_context", "search_memory"]
        saved = await client.call_tool("save_memory", {"text": "Releases are tagged vX.Y.Z."})
        assert not saved.is_error and "quarantined" in saved.content[0].text.lower()
    assert (engram_home / "memory.sqlite").exists()


async def test_a_memory_store_that_cannot_open_fails_only_the_memory_tools(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "auth.py").write_text("def check_token(token):\n    return token\n")
    home = tmp_path / "home"
    home.write_text("a file where the engram home folder should be\n")
    async with Client(_server(project, home)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"grep_code", "save_memory", "search_memory"} <= names
        found = await client.call_tool("grep_code", {"pattern": "check_token"})
        assert not found.is_error
        memory = await client.call_tool("search_memory", {"query": "token"})
        assert memory.is_error and "memory store is not open" in memory.content[0].text
        saved = await client.call_tool("save_memory", {"text": "Releases are tagged."})
        assert saved.is_error and str(home) in saved.content[0].text


def test_a_client_that_leaves_before_listing_lets_the_server_exit(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "engram"), "mcp", "--path", str(project)],
        env={"ENGRAM_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("auto_index", ["off", ""])
async def test_a_project_never_indexed_is_indexed_before_the_first_pack(
    tmp_path: Path, engram_home: Path, auto_index: str
):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "calc.py").write_text(
        'def add(a, b):\n    """Return the sum of two numbers."""\n    return a - b\n'
    )
    (project / "report.py").write_text("def header(title):\n    return title.upper()\n")
    params = _server(project, engram_home)
    params.env = {**(params.env or {}), "ENGRAM_AUTO_INDEX": auto_index}
    async with Client(params) as client:
        await client.list_tools()
        pack = await client.call_tool(
            "build_context", {"task": "the sum of two numbers comes out wrong", "budget": 2000}
        )
    assert not pack.is_error
    assert ("return a - b" in pack.content[0].text) is (auto_index != "off")
