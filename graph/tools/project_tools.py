"""The model's read-only project tools and the wrapping of every tool result as untrusted data."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pathspec
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from engram.graph.context import Context
from engram.graph.errors import PathOutsideProjectError, ToolError
from engram.stores.codeindex.ripgrep_search import grep
from engram.stores.errors import StoreError
from engram.stores.paths import PathEscapeError, confine
from engram.stores.walk import walk_project

__all__ = [
    "CORE_TOOL_NAMES",
    "build_core_tools",
    "confined_path",
    "escape_forged_tags",
    "read_project_file",
    "wrap_tool_result",
]

READ_MAX_LINES = 2_000
READ_MAX_CHARS = 60_000
GLOB_MAX_RESULTS = 500
GREP_DEFAULT_RESULTS = 100
GREP_MAX_RESULTS = 500

CORE_TOOL_NAMES = ("read_file", "glob_files", "grep_code")
_FORGED_TAG = re.compile(r"<(/?)(tool_result)", re.IGNORECASE)


def escape_forged_tags(text: str) -> str:
    """Neutralise ``<tool_result`` and ``</tool_result`` so content cannot close the wrapper."""
    return _FORGED_TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


def wrap_tool_result(tool: str, content: str) -> str:
    """Wrap a tool's output as untrusted data for the model."""
    safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool)
    body = escape_forged_tags(content)
    return f'<tool_result tool="{safe_name}" trust="untrusted-data">\n{body}\n</tool_result>'


def confined_path(root: Path, path: str) -> Path:
    """Resolve a model-supplied path inside ``root`` (the shared confinement rules).

    Raises:
        PathOutsideProjectError: The path leaves the project or names a protected file.
    """
    try:
        return confine(root, path)
    except PathEscapeError as exc:
        raise PathOutsideProjectError(f"refused: {exc}") from None


def read_project_file(
    root: Path, path: str, start_line: int | None = None, end_line: int | None = None
) -> str:
    """Return numbered lines of a project file, capped, with a note when more remains.

    Raises:
        PathOutsideProjectError: The path leaves the project or names a protected file.
        ToolError: The file does not exist, is a folder, or is binary.
    """
    target = confined_path(root, path)
    if not target.exists():
        raise ToolError(f"no such file: {path}")
    if target.is_dir():
        raise ToolError(f"{path} is a folder; use glob_files to list it")
    data = target.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path} is a binary file")
    lines = data.decode("utf-8", errors="replace").splitlines()
    total = len(lines)
    first = max(1, start_line or 1)
    last = min(total, end_line or total, first + READ_MAX_LINES - 1)
    if total and first > total:
        raise ToolError(f"{path} has {total} lines; start_line {first} is past the end")
    out: list[str] = []
    size = 0
    for number in range(first, last + 1):
        line = f"{number:>6}\t{lines[number - 1]}"
        size += len(line) + 1
        if size > READ_MAX_CHARS:
            last = number - 1
            break
        out.append(line)
    header = f"{target.relative_to(root).as_posix()} (lines {first}-{last} of {total})"
    if last < total and (end_line is None or last < end_line):
        out.append(f"[… {total - last} more lines; call read_file with start_line={last + 1}]")
    return header + "\n" + "\n".join(out)


def _glob(root: Path, pattern: str, max_results: int) -> str:
    spec = pathspec.PathSpec.from_lines("gitignore", [pattern])
    files = [f.path for f in walk_project(root).files if spec.match_file(f.path)]
    if not files:
        return f"no files match {pattern!r}"
    shown = files[:max_results]
    more = f"\n[… {len(files) - len(shown)} more; narrow the pattern]" if len(files) > len(
        shown
    ) else ""
    return "\n".join(shown) + more


def _grep(
    root: Path,
    pattern: str,
    literal: bool,
    ignore_case: bool,
    glob: str | None,
    max_results: int,
) -> str:
    limit = max(1, min(max_results, GREP_MAX_RESULTS))
    try:
        matches = grep(
            root, pattern, literal=literal, ignore_case=ignore_case, glob=glob,
            max_results=limit + 1,
        )
    except StoreError as exc:
        raise ToolError(str(exc)) from None
    if not matches:
        return f"no matches for {pattern!r}"
    lines = [f"{m.path}:{m.line}: {m.text}" for m in matches[:limit]]
    if len(matches) > limit:
        lines.append(f"[results capped at {limit}; refine the pattern or pass glob]")
    return "\n".join(lines)


class ReadFileArgs(BaseModel):
    """Arguments of ``read_file``."""

    path: str = Field(description="File path relative to the project root.")
    start_line: int | None = Field(default=None, description="First line to read (1-based).")
    end_line: int | None = Field(default=None, description="Last line to read (inclusive).")


class GlobArgs(BaseModel):
    """Arguments of ``glob_files``."""

    pattern: str = Field(description="Glob pattern, gitignore style: '*.py', 'src/**/*.ts'.")
    max_results: int = Field(default=200, description="Maximum paths to return.")


class GrepArgs(BaseModel):
    """Arguments of ``grep_code``."""

    pattern: str = Field(description="Regular expression (or text with literal=true).")
    literal: bool = Field(default=False, description="Match the pattern as plain text.")
    ignore_case: bool = Field(default=False, description="Case-insensitive matching.")
    glob: str | None = Field(default=None, description="Only search files matching this glob.")
    max_results: int = Field(default=GREP_DEFAULT_RESULTS, description="Maximum lines.")


def build_core_tools(context: Context) -> list[BaseTool]:
    """Return the read-only tools bound to the run's project root."""
    root = context.project_path

    def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        return read_project_file(root, path, start_line, end_line)

    def glob_files(pattern: str, max_results: int = 200) -> str:
        return _glob(root, pattern, max(1, min(max_results, GLOB_MAX_RESULTS)))

    def grep_code(
        pattern: str,
        literal: bool = False,
        ignore_case: bool = False,
        glob: str | None = None,
        max_results: int = GREP_DEFAULT_RESULTS,
    ) -> str:
        return _grep(root, pattern, literal, ignore_case, glob, max_results)

    specs: list[tuple[Callable[..., str], type[BaseModel], str]] = [
        (read_file, ReadFileArgs,
         "Read a text file of the project with line numbers; pass start_line/end_line for "
         "large files. Spilled tool outputs under .engram/tool-outputs/ can be read too."),
        (glob_files, GlobArgs, "List project files whose paths match a glob pattern."),
        (grep_code, GrepArgs,
         "Search the project's files with ripgrep; returns path:line: text for each match. "
         "Use this first for identifiers, error messages and strings."),
    ]
    return [
        StructuredTool.from_function(func=f, name=f.__name__, description=d, args_schema=a)
        for f, a, d in specs
    ]
