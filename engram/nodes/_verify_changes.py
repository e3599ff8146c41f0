"""Node ``verify_changes``: run the project's checks after edits and send failures back."""

from __future__ import annotations

import os
from dataclasses import replace

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from engram.graph import (
    ENGRAM_AUTHOR,
    CommandRun,
    Context,
    Deps,
    SandboxUnavailableError,
    State,
    StateUpdate,
    VerificationValue,
    project_settings,
    sandbox_for,
    sandbox_label,
)
from engram.graph.profile import is_high_risk
from engram.graph.tools import (
    COMMAND_TOOL_NAME,
    ActionSnapshots,
    CommandResult,
    approval_request,
    ask_human,
    command_stream,
    needs_approval,
    parse_review,
    run_shell,
    scrubbed_environment,
)
from engram.nodes._support import current_thread_id
from engram.stores import redact_secrets
from engram.stores.files import spill_if_large
from engram.stores.project import SettingsError, discover_verify_commands, failure_lines
from engram.stores.snapshots import VERIFY_TOOL

VERIFY_MAX_ROUNDS = 3
"""Failed verifications sent back to the model before the task ends as failed."""
VERIFY_TIMEOUT_S = 600
"""Longest one verification command may run."""
FEEDBACK_PREFIX = "[engram verify]"


def _feedback(command: str, result: CommandResult, saved: str | None, rounds: int) -> str:
    lines = failure_lines(result.output) or result.output.strip().splitlines()[-20:]
    status = "timed out" if result.exit_code is None else f"exited {result.exit_code}"
    where = f"\nFull output: {saved} (read it with read_file)." if saved else ""
    return (
        f"{FEEDBACK_PREFIX} The checks failed after your changes (round {rounds} of "
        f"{VERIFY_MAX_ROUNDS}): `{command}` {status}.\n"
        + "\n".join(lines)
        + where
        + "\nFix the cause, then answer again; the checks run again after your answer."
    )


def _decide(state: State, context: Context, commands: tuple[str, ...]) -> tuple[str, bool]:
    """Ask about every check the policy holds back, before running any (replay-safe).

    Returns:
        Why the checks may not run ("" when they may), and whether the user approved all
        commands for the session.
    """
    try:
        allow = project_settings(context).allow_commands
    except SettingsError:
        allow = ()
    approved = list(state.approved_kinds)
    for command in commands:
        if not needs_approval(
            "command",
            policy=context.policy,
            high_risk=is_high_risk(state.task_profile),
            approved_kinds=approved,
            command=command,
            allow=allow,
            root=context.project_path,
        ):
            continue
        proposal = {
            "tool": COMMAND_TOOL_NAME,
            "category": "command",
            "call_id": "verify",
            "args": {"command": command},
            "command": command,
        }
        review = ask_human(
            approval_request(
                proposal,
                context.policy,
                is_high_risk(state.task_profile),
                sandbox=sandbox_label(context),
            ),
            parse_review,
        )
        if review["action"] not in ("approve", "approve_all"):
            return review.get("reason") or "the user declined to run the checks", False
        if review["action"] == "approve_all":
            approved.append("command")
    return "", "command" in approved and "command" not in state.approved_kinds


def verify_changes(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Run the checks (settings, else discovered) once the model is done with its edits.

    All pass: ``passed``. A failure within the round limit goes back to the model as a compact
    message (failing lines and the saved full output); past it, ``failed``. No command found,
    or the user declined: ``not-run``.
    """
    context = runtime.context
    root = context.project_path
    rounds = int(state.verification.get("rounds", 0)) + 1
    try:
        configured = project_settings(context).verify_commands
    except SettingsError as exc:
        return {
            "verification": {
                "status": "not-run",
                "reason": str(exc),
                "final": True,
                "rounds": rounds,
            }
        }
    commands = configured if configured is not None else discover_verify_commands(root)
    if not commands:
        return {
            "verification": {
                "status": "not-run",
                "final": True,
                "rounds": rounds,
                "reason": "no test or lint command found; set [verify] "
                "commands in .engram/settings.toml",
            }
        }
    declined, approved_all = _decide(state, context, commands)
    kinds: StateUpdate = {"approved_kinds": ["command"]} if approved_all else {}
    if declined:
        return {
            "verification": {
                "status": "not-run",
                "final": True,
                "rounds": rounds,
                "reason": declined,
                "commands": list(commands),
            },
            "blocked": [{"tool": VERIFY_TOOL, "reason": declined}],
        }
    env = scrubbed_environment(os.environ)
    try:
        sandbox = sandbox_for(context)
    except SandboxUnavailableError as exc:
        reason = f"{exc}; {exc.hint}"
        return {
            "verification": {
                "status": "not-run",
                "final": True,
                "rounds": rounds,
                "reason": reason,
                "commands": list(commands),
            }
        }
    runs: list[CommandRun] = []
    # like run_command, each check is bracketed by snapshots, so rewind undoes what it wrote
    info = runtime.execution_info
    snapshots = ActionSnapshots(
        context.state, current_thread_id(), info.checkpoint_id if info else None
    )
    notes: StateUpdate = {"notes": snapshots.notes}
    for command in commands:
        before = snapshots.before()
        result = run_shell(
            root,
            command,
            VERIFY_TIMEOUT_S,
            env,
            command_stream(command, VERIFY_TOOL),
            sandbox=sandbox,
            hidden=(context.home_path,),
        )
        snapshots.after(VERIFY_TOOL, before)
        result = replace(result, output=redact_secrets(result.output)[0])
        runs.append(
            {"command": command, "exit_code": result.exit_code, "seconds": round(result.seconds, 2)}
        )
        if result.exit_code != 0:
            return {**kinds, **notes, **_failed(state, context, command, result, runs, rounds)}
    return {
        **kinds,
        **notes,
        "verification": {"status": "passed", "final": True, "rounds": rounds, "runs": runs},
    }


def _failed(
    state: State,
    context: Context,
    command: str,
    result: CommandResult,
    runs: list[CommandRun],
    rounds: int,
) -> StateUpdate:
    out_of_steps = state.steps + 1 >= context.max_steps
    final = rounds >= VERIFY_MAX_ROUNDS or out_of_steps
    verification: VerificationValue = {
        "status": "failed",
        "final": final,
        "rounds": rounds,
        "runs": runs,
        "failing": failure_lines(result.output)[:10],
    }
    if final:
        return {"verification": verification}
    saved = spill_if_large(
        context.state,
        "verify",
        f"round{rounds}",
        result.output,
        session=current_thread_id(),
        limit=0,
    ).path
    message = HumanMessage(content=_feedback(command, result, saved, rounds), name=ENGRAM_AUTHOR)
    return {"verification": verification, "messages": [message]}
