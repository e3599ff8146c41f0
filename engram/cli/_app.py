"""The ``engram`` command line: agent runs, chat, and the registration of every command group."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from engram import __version__
from engram.cli._command_support import (
    err_console,
    handle_errors,
    load_context,
    out_console,
    print_json,
    require_model,
    run_async,
    words,
)
from engram.cli._context_commands import register as register_context
from engram.cli._doctor_command import register as register_doctor
from engram.cli._experience_commands import register as register_experience
from engram.cli._graph_commands import register as register_graph
from engram.cli._index_commands import register as register_index
from engram.cli._memory_commands import register as register_memory
from engram.cli._project_commands import register as register_project
from engram.cli._serve_command import register as register_serve
from engram.cli._session_commands import register as register_sessions
from engram.cli._trust_command import confirm_trust
from engram.cli._trust_command import register as register_trust


def _flags_without_a_type() -> None:
    """Show ``--json`` in ``--help`` as a flag, not as an option taking a ``<bool>``.

    Typer's help prints each option's value type, flags included; a flag takes no value.
    """
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "engram_flags", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.engram_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_without_a_type()

app = typer.Typer(
    name="engram",
    help="A coding agent that gives the model exactly the right context and remembers.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
CommitOption = typer.Option(
    False,
    "--commit",
    help="After each finished task that changed files, commit those files (only those) on "
    "the current branch, with the task as the message.",
)
PolicyOption = typer.Option(
    None,
    "--policy",
    help="Approval of edits and commands: ask (default), auto-edit (edits pass, commands ask) "
    "or yolo (nothing asks; high-risk tasks still do). Also ENGRAM_POLICY.",
)


def _version_callback(value: bool) -> None:
    if value:
        out_console.print(f"engram {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
) -> None:
    """Engram: context engineering and memory for coding agents."""


@app.command()
@handle_errors
def run(
    task_words: Annotated[
        list[str],
        typer.Argument(metavar="TASK", help="What the agent should do (quotes optional)."),
    ],
    path: Path | None = PathOption,
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Skip confirmation of risky tasks."),
    policy: str | None = PolicyOption,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    show_prompt: bool = typer.Option(
        False, "--show-prompt", help="Print each model request in full before sending it."
    ),
    commit: bool = CommitOption,
) -> None:
    """Run one task to completion and print the answer."""
    from langchain_core.messages import HumanMessage

    from engram.cli._auto_index import ensure_index
    from engram.cli._live_view import LiveView, is_live
    from engram.cli._prompt_view import PromptPrinter
    from engram.cli._runtime import open_app
    from engram.cli._turn_commit import commit_turn
    from engram.cli._turn_runner import (
        ask_approval,
        new_thread_id,
        print_turn,
        run_exit_code,
        run_summary,
        run_turn,
        session_config,
    )
    from engram.graph import sandbox_label
    from engram.graph.retrieval import preload
    from engram.sessions import resolve_thread
    from engram.stores import current_branch

    task = words(task_words)
    context = load_context(path, auto_approve=True if yes else None, policy=policy)
    require_model(context)
    if commit:
        current_branch(context.project_path)  # refuse before the task runs, not after
    context = confirm_trust(context)
    ensure_index(context)
    with open_app(context) as engram:
        preload(engram.deps, context)  # else the first turn's timed branches load the indexes
        thread_id = (
            resolve_thread(engram.checkpointer, thread, new_ok=True) if thread else new_thread_id()
        )
        config = session_config(engram.checkpointer, thread_id, context, task)
        if show_prompt:
            config["callbacks"] = [PromptPrinter(err_console)]
        result = run_async(
            run_turn(
                engram.graph,
                config,
                context,
                {"messages": [HumanMessage(content=task)]},
                console=err_console,
                approve=ask_approval,
                quiet=as_json,
                live=LiveView(out_console, err_console) if is_live(as_json) else None,
            )
        )
    if not as_json:
        print_turn(result, context, thread_id)
    made = commit_turn(context, thread_id, task, result) if commit else None
    if as_json:
        print_json({**run_summary(thread_id, result, made), "sandbox": sandbox_label(context)})
    code = run_exit_code(result)
    if code:
        raise typer.Exit(code)
    if made and "error" in made:
        raise typer.Exit(1)


@app.command()
@handle_errors
def chat(
    path: Path | None = PathOption,
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Skip confirmation of risky tasks."),
    policy: str | None = PolicyOption,
    commit: bool = CommitOption,
) -> None:
    """Talk to the agent in a REPL (/status, /exit, /help)."""
    from engram.cli._auto_index import ensure_index
    from engram.cli._chat_repl import chat_loop
    from engram.cli._turn_runner import ask_approval, new_thread_id
    from engram.stores import current_branch

    context = load_context(path, auto_approve=True if yes else None, policy=policy)
    require_model(context)
    if commit:
        current_branch(context.project_path)
    context = confirm_trust(context)
    ensure_index(context)
    chat_loop(context, thread or new_thread_id(), approve=ask_approval, commit=commit)


def run_app() -> None:
    """Run the Typer app (``engram.cli._entry`` calls it for all but ``--version``)."""
    _mask_log_lines()
    app()


def _mask_log_lines() -> None:
    """Print warnings as Python's last-resort handler would, with URL passwords masked."""
    import logging

    from engram.stores import MaskingFilter

    handler = logging.StreamHandler()  # stderr, the bare message
    handler.setLevel(logging.WARNING)
    handler.addFilter(MaskingFilter())
    logging.getLogger().addHandler(handler)


@app.command()
@handle_errors
def mcp(path: Path | None = PathOption) -> None:
    """Serve engram's tools to other agents over stdio (Model Context Protocol)."""
    from engram.cli._mcp_server import serve_stdio

    serve_stdio(load_context(path))


register_index(app)
register_graph(app)
register_context(app)
register_experience(app, register_memory(app))
register_sessions(app)
register_doctor(app)
register_trust(app)
register_project(app)
register_serve(app)
