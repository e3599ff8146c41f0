"""The ``engram`` command line: agent runs, chat, and the registration of every command group."""

from __future__ import annotations

import asyncio
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import typer

from graph.cli_common import err_console, fail, handle_errors, load_context, out_console, print_json
from graph.cli_context import register as register_context
from graph.cli_experience import register as register_experience
from graph.cli_graph import register as register_graph
from graph.cli_index import register as register_index
from graph.cli_memory import register as register_memory
from graph.cli_sessions import register as register_sessions
from graph.context import Context
from graph.errors import ModelNotConfiguredError

__all__ = ["app", "main"]

app = typer.Typer(
    name="engram",
    help="A coding agent that gives the model exactly the right context and remembers.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")


def _version_callback(value: bool) -> None:
    if value:
        try:
            out_console.print(f"engram {version('engram')}")
        except PackageNotFoundError:
            out_console.print("engram (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
) -> None:
    """Engram: context engineering and memory for coding agents."""


def require_model(context: Context) -> None:
    """Fail with a helpful message when no chat model is configured."""
    if not context.model:
        error = ModelNotConfiguredError("no chat model is configured")
        fail(str(error), error.hint)


def ask_approval(payload: dict[str, Any]) -> dict[str, Any]:
    """Show an interrupt's payload in the terminal and read the user's decision."""
    err_console.rule("[bold yellow]confirmation needed")
    for key, value in payload.items():
        err_console.print(f"[bold]{key}:[/] {value}")
    try:
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


@app.command()
@handle_errors
def run(
    task: str = typer.Argument(..., help="What the agent should do."),
    path: Path | None = PathOption,
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Skip confirmation of risky tasks."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Run one task to completion and print the answer."""
    from langchain_core.messages import HumanMessage

    from graph.runner import new_thread_id, print_answer, run_turn, status_line, thread_config
    from graph.runtime import open_app

    context = load_context(path, auto_approve=True if yes else None)
    require_model(context)
    thread_id = thread or new_thread_id()
    with open_app(context) as engram:
        config = thread_config(thread_id, context, task)
        result = asyncio.run(
            run_turn(
                engram.graph, config, context, {"messages": [HumanMessage(content=task)]},
                console=err_console, approve=ask_approval, quiet=as_json,
            )
        )
    if as_json:
        print_json(
            {"thread_id": thread_id, "answer": result.answer,
             "usage": result.values.get("usage", {}), "notes": result.values.get("notes", [])}
        )
        return
    print_answer(out_console, result.answer)
    err_console.print(f"[dim]{status_line(result.values, context, thread_id)}[/]")


@app.command()
@handle_errors
def chat(
    path: Path | None = PathOption,
    thread: str | None = typer.Option(None, "--thread", "-t", help="Continue this session."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Skip confirmation of risky tasks."),
) -> None:
    """Talk to the agent in a REPL (/status, /exit, /help)."""
    from graph.chat import chat_loop
    from graph.runner import new_thread_id

    context = load_context(path, auto_approve=True if yes else None)
    require_model(context)
    chat_loop(context, thread or new_thread_id(), approve=ask_approval)


def main() -> None:
    """Entry point of the ``engram`` console script."""
    app()



@app.command()
@handle_errors
def mcp(path: Path | None = PathOption) -> None:
    """Serve engram's tools to other agents over stdio (Model Context Protocol)."""
    from graph.deps import make_default_deps
    from graph.mcp_server import serve_stdio
    from graph.runtime import open_store

    context = load_context(path)
    with open_store(context) as store:
        serve_stdio(context, make_default_deps(store=store))


register_index(app)
register_graph(app)
register_context(app)
register_experience(app, register_memory(app))
register_sessions(app)
