"""The model's tools: read, search and change the project, run commands, save memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.graph.tools._action_review import (
        action_kind,
        approval_request,
        ask_human,
        needs_approval,
        parse_review,
        propose,
    )
    from engram.graph.tools._action_snapshots import ActionSnapshots
    from engram.graph.tools._available import build_tools, tool_functions
    from engram.graph.tools._command import (
        COMMAND_TOOL_NAME,
        CommandResult,
        command_time_limit,
        run_shell,
        scrubbed_environment,
    )
    from engram.graph.tools._command_stream import COMMAND_EVENT, OUTPUT_EVENT, command_stream
    from engram.graph.tools._function import ToolFunction
    from engram.graph.tools._malformed_calls import MALFORMED_CALLS, answerable, malformed_reason
    from engram.graph.tools._mcp import McpToolset, open_mcp_toolset
    from engram.graph.tools._output import (
        TOOL_ERRORS,
        deliver_tool_output,
        reads_code,
        tool_error_text,
    )
    from engram.graph.tools._project import CORE_TOOL_NAMES, wrap_tool_result
    from engram.graph.tools._relations_tool import (
        answer_to_dict,
        build_relations_tool,
        slice_to_dict,
    )
    from engram.graph.tools._save_memory import SAVE_MEMORY_TOOL, save_memory_function
    from engram.graph.tools._search_code import (
        SEARCH_CODE_DEFAULT_K,
        SEARCH_CODE_MAX_K,
        search_code_hits,
    )
    from engram.graph.tools._timeout import call_with_timeout
    from engram.graph.tools._write import EDIT_TOOL_NAMES, PlannedFiles

__all__ = [
    "ActionSnapshots",
    "COMMAND_EVENT",
    "COMMAND_TOOL_NAME",
    "CORE_TOOL_NAMES",
    "CommandResult",
    "EDIT_TOOL_NAMES",
    "MALFORMED_CALLS",
    "McpToolset",
    "OUTPUT_EVENT",
    "PlannedFiles",
    "SAVE_MEMORY_TOOL",
    "SEARCH_CODE_DEFAULT_K",
    "SEARCH_CODE_MAX_K",
    "TOOL_ERRORS",
    "ToolFunction",
    "action_kind",
    "answer_to_dict",
    "answerable",
    "approval_request",
    "ask_human",
    "build_relations_tool",
    "build_tools",
    "call_with_timeout",
    "command_stream",
    "command_time_limit",
    "deliver_tool_output",
    "malformed_reason",
    "needs_approval",
    "open_mcp_toolset",
    "parse_review",
    "propose",
    "reads_code",
    "run_shell",
    "save_memory_function",
    "scrubbed_environment",
    "search_code_hits",
    "slice_to_dict",
    "tool_error_text",
    "tool_functions",
    "wrap_tool_result",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.graph.tools._action_review": (
            "action_kind",
            "approval_request",
            "ask_human",
            "needs_approval",
            "parse_review",
            "propose",
        ),
        "engram.graph.tools._action_snapshots": ("ActionSnapshots",),
        "engram.graph.tools._available": ("build_tools", "tool_functions"),
        "engram.graph.tools._command": (
            "COMMAND_TOOL_NAME",
            "CommandResult",
            "command_time_limit",
            "run_shell",
            "scrubbed_environment",
        ),
        "engram.graph.tools._command_stream": ("COMMAND_EVENT", "OUTPUT_EVENT", "command_stream"),
        "engram.graph.tools._function": ("ToolFunction",),
        "engram.graph.tools._malformed_calls": (
            "MALFORMED_CALLS",
            "answerable",
            "malformed_reason",
        ),
        "engram.graph.tools._mcp": ("McpToolset", "open_mcp_toolset"),
        "engram.graph.tools._output": (
            "TOOL_ERRORS",
            "deliver_tool_output",
            "reads_code",
            "tool_error_text",
        ),
        "engram.graph.tools._project": ("CORE_TOOL_NAMES", "wrap_tool_result"),
        "engram.graph.tools._relations_tool": (
            "answer_to_dict",
            "build_relations_tool",
            "slice_to_dict",
        ),
        "engram.graph.tools._save_memory": ("SAVE_MEMORY_TOOL", "save_memory_function"),
        "engram.graph.tools._search_code": (
            "SEARCH_CODE_DEFAULT_K",
            "SEARCH_CODE_MAX_K",
            "search_code_hits",
        ),
        "engram.graph.tools._timeout": ("call_with_timeout",),
        "engram.graph.tools._write": ("EDIT_TOOL_NAMES", "PlannedFiles"),
    },
)
