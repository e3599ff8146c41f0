"""The project's own configuration: identity, trust, rules, settings, test and MCP commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram._lazy import lazy_face

if TYPE_CHECKING:
    from engram.stores.project._identity import (
        ProjectIdentity,
        join_note,
        join_project,
        joined_identity,
        leave_project,
        memory_key,
        project_identity,
    )
    from engram.stores.project._index_trust import claim_index_dir, index_is_trusted
    from engram.stores.project._key import namespace_label, project_key
    from engram.stores.project._mcp_config import McpServer, load_mcp_servers
    from engram.stores.project._rules import load_rules_files
    from engram.stores.project._settings import (
        ProjectSettings,
        SettingsError,
        load_project_settings,
    )
    from engram.stores.project._state import ProjectState, private_dir, project_state_dir
    from engram.stores.project._test_commands import is_test_path, project_has_tests
    from engram.stores.project._trust import (
        ShippedFile,
        forget_trust,
        record_trust,
        shipped_files,
        trust_status,
    )
    from engram.stores.project._verify_commands import discover_verify_commands, failure_lines

__all__ = [
    "McpServer",
    "ProjectIdentity",
    "ProjectSettings",
    "ProjectState",
    "SettingsError",
    "ShippedFile",
    "claim_index_dir",
    "discover_verify_commands",
    "failure_lines",
    "forget_trust",
    "index_is_trusted",
    "is_test_path",
    "join_note",
    "join_project",
    "joined_identity",
    "leave_project",
    "load_mcp_servers",
    "load_project_settings",
    "load_rules_files",
    "memory_key",
    "namespace_label",
    "private_dir",
    "project_has_tests",
    "project_identity",
    "project_key",
    "project_state_dir",
    "record_trust",
    "shipped_files",
    "trust_status",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "engram.stores.project._identity": (
            "ProjectIdentity",
            "join_note",
            "join_project",
            "joined_identity",
            "leave_project",
            "memory_key",
            "project_identity",
        ),
        "engram.stores.project._index_trust": ("claim_index_dir", "index_is_trusted"),
        "engram.stores.project._key": ("namespace_label", "project_key"),
        "engram.stores.project._mcp_config": ("McpServer", "load_mcp_servers"),
        "engram.stores.project._rules": ("load_rules_files",),
        "engram.stores.project._settings": (
            "ProjectSettings",
            "SettingsError",
            "load_project_settings",
        ),
        "engram.stores.project._state": ("ProjectState", "private_dir", "project_state_dir"),
        "engram.stores.project._test_commands": ("is_test_path", "project_has_tests"),
        "engram.stores.project._trust": (
            "ShippedFile",
            "forget_trust",
            "record_trust",
            "shipped_files",
            "trust_status",
        ),
        "engram.stores.project._verify_commands": ("discover_verify_commands", "failure_lines"),
    },
)
