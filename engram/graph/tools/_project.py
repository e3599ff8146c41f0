"""The model's read-only project tools and the wrapping of every tool result as untrusted data."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from engram.graph._context import Context
from engram.graph._errors import ToolError
from engram.graph._markers import escape_markers
from engram.graph.tools._file_reading import read_project_file
from engram.graph.tools._function import ToolFunction
from engram.graph.tools._line_redaction import redacted_matches
from engram.stores import StoreError
from engram.stores.codeindex import RG_TIMEOUT_S, grep, is_code_file
from engram.stores.files import display_path, spilled_folder, walk_project

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from engram.stores.codeindex import IgnoreFileCheck

GLOB_MAX_RESULTS = 500
GREP_DEFAULT_RESULTS = 100
GREP_MAX_RESULTS = 500

READ_TOOL_NAME = "read_file"
GREP_TOOL_NAME = "grep_code"
CORE_TOOL_NAMES = (READ_TOOL_NAME, "glob_files", GREP_TOOL_NAME)


def wrap_tool_result(tool: str, content: str) -> str:
    """Wrap a tool's output as untrusted data for the model."""
    safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool)
    body = escape_markers(content)  # content can neither close the wrapper nor fake a section
    return f'<tool_result tool="{safe_name}" trust="untrusted-data">\n{body}\n</tool_result>'


def _glob(root: Path, pattern: str, max_results: int) -> str:
    from engram.stores.files._ignore_rules import IgnoreRules

    spec = IgnoreRules.from_lines([pattern])  # linear time, whatever the model's pattern
    if not spec.rules:
        raise ValueError(
            f"invalid glob pattern {pattern!r}: blank, a comment or a lone '!' (try '**/*.py')"
        )
    files = [f.path for f in walk_project(root).files if spec.match_file(f.path)]
    if not files:
        return f"no files match {pattern!r}"
    shown = [display_path(f) for f in files[:max_results]]
    more = (
        f"\n[… {len(files) - len(shown)} more; narrow the pattern]"
        if len(files) > len(shown)
        else ""
    )
    return "\n".join(shown) + more


def _grep(
    root: Path,
    pattern: str,
    literal: bool,
    ignore_case: bool,
    glob: str | None,
    max_results: int,
    ignore_check: IgnoreFileCheck | None = None,
) -> str:
    limit = max(1, min(max_results, GREP_MAX_RESULTS))
    try:
        matches = grep(
            root,
            pattern,
            literal=literal,
            ignore_case=ignore_case,
            glob=glob,
            max_results=limit + 1,
            ignore_check=ignore_check,
        )
    except StoreError as exc:
        raise ToolError(str(exc)) from None
    except subprocess.TimeoutExpired:
        raise ToolError(
            f"the search for {pattern!r} took longer than "
            f"{RG_TIMEOUT_S:g} s; use a more specific pattern or a glob"
        ) from None
    if not matches:
        return f"no matches for {pattern!r}"
    shown = matches[:limit]
    texts = redacted_matches(root, shown)
    lines = [f"{display_path(m.path)}:{m.line}: {t}" for m, t in zip(shown, texts, strict=True)]
    if len(matches) > limit:
        lines.append(f"[results capped at {limit}; refine the pattern or pass glob]")
    return "\n".join(lines)


def _check_pattern(kind: str, text: str) -> None:
    """Raise ToolError saying why when a program cannot take ``text`` as a pattern.

    The limit is the ignore rules' (``MAX_PATTERN_CHARS``, PATH_MAX): they skip a longer glob
    line, and ripgrep fails on a longer regex with "Argument list too long".
    """
    from engram.stores.files._ignore_rules import MAX_PATTERN_CHARS

    if len(text) > MAX_PATTERN_CHARS:
        raise ToolError(
            f"the {kind} is {len(text):,} characters long; the limit is {MAX_PATTERN_CHARS:,}"
        )
    if "\x00" in text:
        raise ToolError(f"the {kind} holds a NUL byte, which no pattern can")


class ReadFileArgs(BaseModel):
    """Arguments of ``read_file``."""

    path: str = Field(description="File path relative to the project root.")
    start_line: int | None = Field(default=None, description="First line to read (1-based).")
    end_line: int | None = Field(default=None, description="Last line to read (inclusive).")
    start_char: int | None = Field(
        default=None,
        description="Character of start_line to start from (0-based), to page through a "
        "line too long for one call.",
    )


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


def build_core_tools(context: Context, *, spill_folder: str | None = None) -> list[BaseTool]:
    """Return the read-only tools bound to the run's project root (see ``core_tool_functions``)."""
    return [f.to_tool() for f in core_tool_functions(context, spill_folder=spill_folder)]


def core_tool_functions(
    context: Context,
    *,
    spill_folder: str | None = None,
    ignore_check: IgnoreFileCheck | None = None,
) -> list[ToolFunction]:
    """Return the read-only tools bound to the run's project root, before LangChain.

    Args:
        context: The run settings (the project root).
        spill_folder: Root-relative folder of this session's own spilled tool outputs, the
            only part of ``.engram/`` that ``read_file`` may open; None opens none of it.
        ignore_check: The run's memory of trees found free of unsafe ignore files, so a
            ``grep_code`` call need not list every folder again (see ``grep``).
    """
    root = context.project_path
    spill_prefix = f"{spill_folder}/" if spill_folder else None

    def read_file(
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        start_char: int | None = None,
    ) -> str:
        wanted = path.replace("\\", "/").removeprefix("./")
        if spill_prefix and spill_folder and wanted.startswith(spill_prefix):
            # this session's own spilled outputs: kept in engram's state folder, not the tree
            folder = spilled_folder(context.state, spill_folder)
            return read_project_file(
                folder,
                wanted[len(spill_prefix) :],
                start_line,
                end_line,
                start_char,
                shown_as=spill_prefix,
            )
        return read_project_file(
            root, path, start_line, end_line, start_char, code=is_code_file(path)
        )

    def glob_files(pattern: str, max_results: int = 200) -> str:
        _check_pattern("glob pattern", pattern)
        return _glob(root, pattern, max(1, min(max_results, GLOB_MAX_RESULTS)))

    def grep_code(
        pattern: str,
        literal: bool = False,
        ignore_case: bool = False,
        glob: str | None = None,
        max_results: int = GREP_DEFAULT_RESULTS,
    ) -> str:
        _check_pattern("search pattern", pattern)
        _check_pattern("glob", glob or "")
        return _grep(root, pattern, literal, ignore_case, glob, max_results, ignore_check)

    specs: list[tuple[Callable[..., str], type[BaseModel], str]] = [
        (
            read_file,
            ReadFileArgs,
            "Read a text file of the project with line numbers; pass start_line/end_line for "
            "large files, and start_char to page through a very long line. This session's spilled "
            "tool outputs (the paths their previews name) can be read too.",
        ),
        (glob_files, GlobArgs, "List project files whose paths match a glob pattern."),
        (
            grep_code,
            GrepArgs,
            "Search the project's files with ripgrep; returns path:line: text for each match. "
            "Use this first for identifiers, error messages and strings.",
        ),
    ]
    return [ToolFunction(f.__name__, d, f, a) for f, a, d in specs]
