"""With no terminal, an action that asks is refused with a reason that fits its policy."""

from __future__ import annotations

from engram.cli import _action_prompt as action_prompt
from engram.cli._action_prompt import ask_action, no_terminal_reason


def test_the_reason_names_the_policy_and_what_would_let_the_action_pass():
    ask = no_terminal_reason("ask")
    assert "policy 'ask'" in ask and "--policy auto-edit" in ask and "[commands] allow" in ask
    auto_edit = no_terminal_reason("auto-edit")
    assert "policy 'auto-edit'" in auto_edit and "--policy auto-edit" not in auto_edit
    assert "--policy yolo" in auto_edit
    risky = no_terminal_reason("yolo", high_risk=True)
    assert "high-risk task asks under every policy" in risky and "--policy" not in risky


def test_no_terminal_means_a_rejection_with_that_reason(monkeypatch):
    monkeypatch.setattr(action_prompt, "has_terminal", lambda: False)
    answer = ask_action({"tool": "run_command", "policy": "auto-edit", "high_risk": False})
    assert answer == {"action": "reject", "reason": no_terminal_reason("auto-edit")}


def test_a_proposed_command_with_control_characters_is_not_echoed_as_the_default(
    monkeypatch, capsys
):
    import io

    command = "echo safe\x1b[2K\rrm -rf ~"
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    edited = action_prompt._edited_args({"tool": "run_command", "args": {"command": command}})
    assert edited == {"command": command}  # Enter keeps the proposed command, unchanged
    shown = capsys.readouterr()
    assert "\x1b" not in shown.err + shown.out and "\r" not in shown.err + shown.out
    assert "Enter keeps the one above" in shown.err
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    plain = action_prompt._edited_args({"tool": "run_command", "args": {"command": "ls -la"}})
    assert plain == {"command": "ls -la"} and "[ls -la]" in capsys.readouterr().err
