"""Drive one turn of a session from a terminal: stream progress, answer interrupts, report."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import typer
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.types import Command
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from engram.cli._action_prompt import ask_action
from engram.cli._command_support import err_console, out_console
from engram.cli._live_view import LIVE_STREAM_MODES, LiveView, show_update
from engram.cli._turn_stop import (
    SigintStop,
    StoppedAtQuestion,
    close_stopped_calls,
    step_of,
    stop_child_groups,
    stopped_message,
)
from engram.graph import USAGE_KEYS, Context, content_text, estimate_messages
from engram.stores import BackendUnavailableError, Ledger
from engram.stores.sqlite import session_metadata

TITLE_CHARS = 120
EXIT_STOPPED = 130
EXIT_BLOCKED = 3
"""``engram run``: an action or the task itself was refused (no approval, a rejected high-risk
task)."""
EXIT_CHECKS_FAILED = 4
"""``engram run``: the checks run after the task's changes failed."""
EXIT_STEP_LIMIT = 5
"""``engram run``: the task hit its step limit (``max_steps``) before it was done."""
"""Exit status of a command whose turn Ctrl-C stopped (128 + SIGINT, as shells report it)."""

Approver = Callable[[dict[str, Any]], dict[str, Any]]
DURABILITY = "sync"
"""Each step's checkpoint is saved before the next step starts: a checkpointer that fails
stops the turn there, so no edit or command runs that the session would not remember."""


def new_thread_id() -> str:
    """Return a readable, sortable session id such as ``20261129-1912-a1b2c3``."""
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def thread_config(
    thread_id: str, context: Context, title: str = "", *, saved: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Return the LangGraph config of a session thread, tagged with its project and title.

    ``saved`` is the session's recorded metadata: its title (the first task) and fork origin
    are kept, so every checkpoint a later turn, replay or resume writes still carries them.
    """
    from engram.stores.project import memory_key

    metadata: dict[str, Any] = {
        **(saved or {}),
        "project": str(context.project_path),
        "policy": context.policy,  # a resume or replay keeps it unless told otherwise
    }
    shared = memory_key(context.project_path, context.home_path)
    if shared != metadata["project"]:
        metadata["project_id"] = shared  # the project's other checkouts list it too
    if title and not metadata.get("title"):
        metadata["title"] = " ".join(title.split())[:TITLE_CHARS]
    return {"configurable": {"thread_id": thread_id}, "metadata": metadata}


def session_config(
    checkpointer: Any, thread_id: str, context: Context, title: str = ""
) -> dict[str, Any]:
    """Return ``thread_config`` with the metadata the session already has in ``checkpointer``."""
    return thread_config(thread_id, context, title, saved=session_metadata(checkpointer, thread_id))


@dataclass
class TurnResult:
    """What a finished (or paused) turn left behind."""

    values: dict[str, Any]
    answer: str
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)
    stopped: str = ""
    """The step Ctrl-C stopped (a node name, or ``turn``); empty when the turn was not stopped."""
    streamed: bool = False
    """The answer was already shown as it streamed."""


def _final_answer(messages: list[AnyMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return content_text(message.content)  # a provider may answer in content blocks
        if isinstance(message, HumanMessage):
            break
    return ""


async def _stream(
    graph: Any,
    graph_input: Any,
    config: dict[str, Any],
    context: Context,
    console: Console,
    quiet: bool,
    live: LiveView | None,
) -> None:
    if live is not None:
        async for mode, data in graph.astream(
            graph_input,
            config,
            context=context,
            stream_mode=LIVE_STREAM_MODES,
            durability=DURABILITY,
        ):
            live.handle(mode, data)
        live.pause()
        return
    async for chunk in graph.astream(
        graph_input, config, context=context, stream_mode="updates", durability=DURABILITY
    ):
        if quiet:
            continue
        for node, update in chunk.items():
            if node != "__interrupt__":
                show_update(console, update)


async def run_turn(
    graph: Any,
    config: dict[str, Any],
    context: Context,
    graph_input: Any,
    *,
    console: Console,
    approve: Approver | None = None,
    quiet: bool = False,
    live: LiveView | None = None,
) -> TurnResult:
    """Stream one turn; answer interrupts with ``approve`` (or leave the session paused).

    A ``checkpoint_id`` in ``config`` (a replay) only picks the starting point: the state read
    afterwards, and any resumed interrupt, use the thread's newest checkpoint. ``live`` shows
    the turn as it happens (a terminal). Ctrl-C stops the running step: its commands are
    killed, its open tool calls answered as stopped, and the result says ``stopped``.
    """
    pending: Any = graph_input
    run_config = config
    latest = {
        **config,
        "configurable": {k: v for k, v in config["configurable"].items() if k != "checkpoint_id"},
    }
    with SigintStop() as stop, _stopped_when_unsaved(config):
        try:
            while True:
                await _stream(graph, pending, run_config, context, console, quiet, live)
                run_config = latest
                snapshot = await graph.aget_state(latest)
                interrupts = list(getattr(snapshot, "interrupts", ()) or ())
                if not interrupts:
                    break
                if approve is None:
                    return TurnResult(dict(snapshot.values), "", interrupted=True)
                if live is not None:
                    live.shown_in_approval(dict(interrupts[0].value))
                pending = Command(resume=stop.ask(approve, dict(interrupts[0].value)))
        except (asyncio.CancelledError, StoppedAtQuestion):
            if live is not None:
                live.pause()
            return await _stopped(graph, latest, context)
    values = dict(snapshot.values)
    return TurnResult(
        values,
        _final_answer(values.get("messages", [])),
        streamed=live is not None and live.streamed,
    )


@contextmanager
def _stopped_when_unsaved(config: dict[str, Any]) -> Iterator[None]:
    """Say once that the session's store went away, that the turn stopped, and how to go on."""
    try:
        yield
    except BackendUnavailableError as exc:
        thread_id = config["configurable"]["thread_id"]
        raise BackendUnavailableError(
            f"{exc}; the turn stopped there: no further step (edit, command) runs unsaved",
            hint=f"once the server is back, `engram sessions resume {thread_id}` goes on from the "
            "last saved step",
        ) from None


async def _stopped(graph: Any, config: dict[str, Any], context: Context) -> TurnResult:
    """Leave a valid session after Ctrl-C: every tool call of the stopped step answered."""
    stop_child_groups()
    snapshot = await graph.aget_state(config)
    step = step_of(snapshot)
    if step == "run_tools":
        closing = close_stopped_calls(list(snapshot.values.get("messages") or []))
        if closing:
            await graph.aupdate_state(
                config, {"messages": closing, "action_reviews": {}}, as_node="run_tools"
            )
            thread_id = str(config["configurable"]["thread_id"])
            await asyncio.to_thread(
                lambda: Ledger.for_project(context.project_path, context.home_path).append_messages(
                    thread_id, list(closing)
                )
            )
            snapshot = await graph.aget_state(config)
    return TurnResult(dict(snapshot.values), "", stopped=step or "turn")


def run_summary(
    thread_id: str, result: TurnResult, commit: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return the machine-readable result of a turn (``engram run --json``).

    ``commit`` is what ``--commit`` made (sha, branch, subject, files) or why it could not.
    """
    values = result.values
    verification = values.get("verification") or {}
    return {
        "thread_id": thread_id,
        "answer": result.answer,
        "files_changed": list(values.get("files_changed") or []),
        "tests": verification.get("status") or "not-run",
        "blocked": list(values.get("blocked") or []),
        "step_limit": hit_step_limit(result),
        "exit_code": run_exit_code(result),
        "usage": values.get("usage", {}),
        "interrupted": result.interrupted,
        **({"stopped": result.stopped} if result.stopped else {}),
        "commit": commit,
        "notes": values.get("notes", []),
    }


def checks_line(values: dict[str, Any]) -> str:
    """Say how the checks after the task's changes ended (the last line of a plain run)."""
    verification = values.get("verification") or {}
    status = str(verification.get("status") or "not-run")
    commands = [str(r.get("command")) for r in verification.get("runs") or []]
    why = str(verification.get("reason") or "")
    detail = f" ({', '.join(commands)})" if commands else (f": {why}" if why else "")
    style = {"passed": "green", "failed": "bold red"}.get(status, "dim")
    return f"[{style}]checks {status}{escape(detail)}[/]"


def hit_step_limit(result: TurnResult) -> bool:
    """Return whether the turn reached its step limit (its last model call had no tools)."""
    from engram.nodes import STEP_LIMIT_NOTE

    return STEP_LIMIT_NOTE in (result.values.get("notes") or [])


def run_exit_code(result: TurnResult) -> int:
    """Return ``engram run``'s exit code (the first that applies, in this order).

    130 stopped by Ctrl-C, 3 an action or the task was refused, 4 the checks failed, 5 the
    step limit was hit, else 0.
    """
    if result.stopped:
        return EXIT_STOPPED
    if result.values.get("blocked") or result.interrupted:
        return EXIT_BLOCKED
    if (result.values.get("verification") or {}).get("status") == "failed":
        return EXIT_CHECKS_FAILED
    if hit_step_limit(result):
        return EXIT_STEP_LIMIT
    return 0


def status_line(values: dict[str, Any], context: Context, thread_id: str) -> str:
    """Summarise context use, tokens and cache hits of a session in one line."""
    usage = {k: int((values.get("usage") or {}).get(k, 0)) for k in USAGE_KEYS}
    used = estimate_messages(
        values.get("messages", []), system_prompt=values.get("system_prompt", "")
    )
    share = 100.0 * used / context.context_window
    hit = 100.0 * usage["cache_read"] / usage["input"] if usage["input"] else 0.0
    return (
        f"context {share:.0f}% ({used:,}/{context.context_window:,}) · "
        f"tokens in {usage['input']:,} out {usage['output']:,} · "
        f"cache hits {usage['cache_read']:,} ({hit:.0f}%) · calls {usage['calls']} · "
        f"session {thread_id}"
    )


def print_answer(console: Console, result: TurnResult) -> None:
    """Render the model's final answer as Markdown (unless it was already streamed)."""
    if result.answer and not result.streamed:
        console.print(Markdown(result.answer))


def print_turn(result: TurnResult, context: Context, thread_id: str, *, chat: bool = False) -> None:
    """Print a finished turn: the answer (unless streamed), what Ctrl-C stopped, the status."""
    if result.stopped:
        message = stopped_message(result.stopped, thread_id, chat=chat)
        err_console.print(f"[yellow]{escape(message)}[/]")
    else:
        print_answer(out_console, result)
    for item in result.values.get("blocked") or []:
        err_console.print(
            f"[yellow]refused: {escape(str(item.get('tool')))}: "
            f"{escape(str(item.get('reason')))}[/]"
        )
    if hit_step_limit(result):
        err_console.print(f"[yellow]stopped at the step limit ({context.max_steps} model calls)[/]")
    err_console.print(f"[dim]{status_line(result.values, context, thread_id)}[/]")
    err_console.print(checks_line(result.values))


def confirmation_lines(payload: Mapping[str, Any]) -> list[str]:
    """Return a confirmation request as lines a person reads (no Python reprs).

    The question, the task, the profile's risk and reasons, and the experience that warns
    about it; the memory block and the resume format are for programs (``--json``).
    """
    lines = [str(payload.get("question") or "Approve this task?")]
    if payload.get("task"):
        lines.append(f"task: {' '.join(str(payload['task']).split())}")
    profile = payload.get("profile") or {}
    if isinstance(profile, Mapping) and profile:
        head = ", ".join(
            f"{label} {profile[key]}"
            for key, label in (("task_type", "type"), ("risk", "risk"))
            if profile.get(key)
        )
        if head:
            lines.append(f"profile: {head}")
        lines += [f"  - {reason}" for reason in profile.get("reasons") or []]
    warnings = [w for w in payload.get("warnings") or [] if isinstance(w, Mapping)]
    if warnings:
        lines.append("experience that warns about it:")
        lines += [
            f"  - {w.get('kind', '')} {w.get('id', '')}: {w.get('reason', '')}" for w in warnings
        ]
    return lines


def ask_approval(payload: dict[str, Any]) -> dict[str, Any]:
    """Show an interrupt's payload in the terminal and read the user's decision."""
    if payload.get("kind") == "approve_action":
        return ask_action(payload)
    err_console.rule("[bold yellow]confirmation needed")
    for line in confirmation_lines(payload):
        err_console.print(line, markup=False, highlight=False)
    try:  # a script may pipe the answer in
        answer = typer.prompt("approve / reject / constrain", default="reject", err=True)
    except (EOFError, typer.Abort):
        err_console.print("[yellow]no answer (no terminal): rejected; rerun with --yes[/]")
        return {"action": "reject"}
    answer = answer.strip().lower()
    if answer.startswith("a"):
        return {"action": "approve"}
    if answer.startswith("c"):
        constraints = typer.prompt("constraints to add", err=True)
        return {"action": "constrain", "constraints": constraints}
    return {"action": "reject"}
