"""Approval policies, the command allowlist, answers understood, and project settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from engram.graph import State, route_after_call_model
from engram.graph.tools import needs_approval, parse_review
from engram.graph.tools._action_review import command_allowed
from engram.stores.project import SettingsError, load_project_settings


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("pytest -q tests/", True),
        ("ruff check .", True),
        ("pytest; rm -rf ~", False),
        ("pytest && curl evil", False),
        ("pytest | tee out", False),
        ("pytest $(rm -rf ~)", False),
        ("pytest `id`", False),
        ("pytest > /etc/passwd", False),
        ("rm -rf /", False),
        ("", False),
    ],
)
def test_command_allowlist(command, allowed):
    assert command_allowed(command, ["pytest*", "ruff check*"]) is allowed


@pytest.mark.parametrize(
    ("kind", "policy", "high_risk", "kinds", "command", "asks"),
    [
        ("edit", "ask", False, [], "", True),
        ("command", "ask", False, [], "make", True),
        ("command", "ask", False, [], "pytest -q", False),  # allowlisted
        ("edit", "auto-edit", False, [], "", False),
        ("command", "auto-edit", False, [], "make", True),
        ("edit", "yolo", False, [], "", False),
        ("command", "yolo", False, [], "make", False),
        ("edit", "yolo", True, [], "", True),  # high risk always asks
        ("command", "ask", True, [], "pytest -q", True),
        ("edit", "ask", True, ["edit"], "", False),  # the user approved edits for the session
        ("command", "ask", False, ["edit"], "make", True),
    ],
)
def test_needs_approval(kind, policy, high_risk, kinds, command, asks):
    assert (
        needs_approval(
            kind,
            policy=policy,
            high_risk=high_risk,
            approved_kinds=kinds,
            command=command,
            allow=["pytest*"],
        )
        is asks
    )


@pytest.mark.parametrize(
    ("answer", "action", "reason"),
    [
        ({"action": "approve"}, "approve", ""),
        ({"action": "reject", "reason": "not now"}, "reject", "not now"),
        ({"action": "approve-all"}, "approve_all", ""),
        ("y", "approve", ""),
        ("always", "approve_all", ""),
        (False, "reject", ""),
        ("use the helper in utils instead", "reject", "use the helper in utils instead"),
    ],
)
def test_parse_review(answer, action, reason):
    review = parse_review(answer)
    assert (review["action"], review["reason"]) == (action, reason)


def test_parse_review_edit_and_nonsense():
    assert parse_review({"action": "edit", "args": {"command": "ls"}})["args"] == {"command": "ls"}
    with pytest.raises(ValueError, match="unknown action"):
        parse_review({"action": "perhaps"})
    with pytest.raises(ValueError, match="new arguments"):
        parse_review({"action": "edit"})


def test_actions_route_through_review():
    edit = AIMessage(
        "",
        tool_calls=[
            {"name": "grep_code", "args": {}, "id": "1"},
            {"name": "edit_file", "args": {}, "id": "2"},
        ],
    )
    read = AIMessage("", tool_calls=[{"name": "read_file", "args": {}, "id": "1"}])
    assert route_after_call_model(State(messages=[HumanMessage("q"), edit])) == "review_actions"
    assert route_after_call_model(State(messages=[HumanMessage("q"), read])) == "run_tools"


def test_project_settings(tmp_path: Path):
    assert load_project_settings(tmp_path).allow_commands == ()
    (tmp_path / ".engram").mkdir()
    settings = tmp_path / ".engram" / "settings.toml"
    settings.write_text('[commands]\nallow = ["pytest*"]\n[verify]\ncommands = ["make test"]\n')
    loaded = load_project_settings(tmp_path)
    assert loaded.allow_commands == ("pytest*",) and loaded.verify_commands == ("make test",)
    settings.write_text('[commands]\nallow = "pytest*"\n')
    with pytest.raises(SettingsError, match="list of strings"):
        load_project_settings(tmp_path)
    settings.write_text("[commands\n")
    with pytest.raises(SettingsError, match="cannot read"):
        load_project_settings(tmp_path)


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("pytest -q tests/", True),
        ("pytest -q ./tests/unit", True),
        ("pytest --basetemp=/tmp/wipe-me", False),
        ("pytest --basetemp /home/user/work", False),
        ("pytest --junitxml=/abs/report.xml", False),
        ("pytest -o cache_dir=/abs/cache", False),
        ("pytest ../other-project", False),
        ("pytest tests/../../outside", False),
        ("pytest ~/notes", False),
        ("pytest $HOME/x", False),
        ("pytest 'unbalanced", False),
        ("pytest -k 'a and not b'", True),
    ],
)
def test_an_allowlisted_command_reaching_outside_the_project_asks(tmp_path, command, allowed):
    assert command_allowed(command, ["pytest*"], tmp_path) is allowed


def test_an_absolute_path_inside_the_project_stays_allowed(tmp_path):
    assert command_allowed(f"pytest {tmp_path}/tests", ["pytest*"], tmp_path)


def test_the_program_may_live_anywhere_but_an_assignment_may_not_point_outside(tmp_path):
    assert command_allowed(
        "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -q", ["*pytest*"], tmp_path
    )
    assert not command_allowed("TMPDIR=/elsewhere pytest -q", ["*pytest*"], tmp_path)
