"""The ``engram chat`` REPL: turns, slash commands, history, and safe Ctrl-C handling."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage

from engram.cli._chat_memory_commands import handle_memory_command, is_memory_command
from engram.cli._command_support import err_console, known_failure, out_console, report_error
from engram.cli._live_view import LiveView, is_live
from engram.cli._runtime import open_app
from engram.cli._turn_commit import commit_turn
from engram.cli._turn_runner import print_turn, run_turn, session_config, status_line
from engram.graph import Context
from engram.graph.retrieval import preload
from engram.graph.tools import build_relations_tool
from engram.sessions import App, compact_session, partitions, record_outcome, resolve_thread
from engram.stores.project import memory_key

SLASH_HELP = """Commands:
  /status                   context use, tokens, cache hits, budget by part
  /compact                  summarize the session down to the last request
  /save [--global] TEXT     remember a fact (--force to save despite a conflict)
  /memory list|search Q|delete ID|verify ID|replace ID TEXT
  /good, /bad               tell engram whether the last task went well
  /graph SYMBOL [RELATION]  callers, callees, subclasses, … of a symbol
  /index                    update the code index and graph of this project
  /rewind [CHECKPOINT|start] [--force]  files and conversation back to a checkpoint
                            (default: before the last turn)
  /undo [--force]           revert the last approved edit or command
  /help                     this help
  /exit, /quit              leave (the session is saved; resume with --thread)"""


def _read_line(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def _setup_history(context: Context) -> None:
    try:
        import readline
    except ImportError:
        return
    history = context.home_path / "chat_history"
    history.parent.mkdir(parents=True, exist_ok=True)
    try:
        readline.read_history_file(history)
    except OSError:
        pass
    import atexit

    atexit.register(readline.write_history_file, str(history))


def _status(engram: App, thread_id: str) -> str:
    values = engram.graph.get_state({"configurable": {"thread_id": thread_id}}).values or {}
    return status_line(dict(values), engram.context, thread_id)


def handle_slash(line: str, engram: App, thread_id: str) -> bool:
    """Run one slash command; return False when the REPL should exit."""
    command = line.split(maxsplit=1)[0].lower()
    if command in {"/exit", "/quit"}:
        return False
    rest = line[len(command) :].strip()
    if command == "/status":
        out_console.print(_status(engram, thread_id))
        parts = partitions(engram, thread_id)
        total = sum(parts.values()) or 1
        out_console.print(
            "  "
            + " · ".join(
                f"{name} {tokens:,} ({100 * tokens / total:.0f}%)" for name, tokens in parts.items()
            )
        )
    elif command == "/compact":
        event = asyncio.run(compact_session(engram, thread_id))
        out_console.print(
            f"compaction {event['status']}: {event['tokens_before']:,} → "
            f"{event['tokens_after']:,} tokens {event.get('reason', '')}".rstrip()
        )
    elif is_memory_command(line):
        out_console.print(
            handle_memory_command(
                line,
                store=engram.store,
                project_key=memory_key(engram.context.project_path, engram.context.home_path),
                now=datetime.now(UTC),
            ),
            markup=False,
        )
    elif command in {"/good", "/bad"}:
        verdict = "success" if command == "/good" else "failure"
        out_console.print(record_outcome(engram, thread_id, verdict))
    elif command == "/graph":
        symbol, _, relation = rest.partition(" ")
        if not symbol:
            out_console.print("usage: /graph SYMBOL [RELATION]")
        else:
            tool = build_relations_tool(engram.context, engram.deps)
            args = {"symbol": symbol, **({"relation": relation.strip()} if relation else {})}
            out_console.print(tool.invoke(args), markup=False)
    elif command == "/index":
        _index(engram)
    elif command in {"/rewind", "/undo"}:
        _rewind(engram, thread_id, command, rest)
    elif command == "/help":
        out_console.print(SLASH_HELP)
    else:
        out_console.print(f"unknown command {command}; /help lists them")
    return True


def _rewind(engram: App, thread_id: str, command: str, rest: str) -> None:
    from engram.cli._session_rewind_command import START, rewind_message
    from engram.graph import SessionError
    from engram.sessions import (
        last_turn_start,
        resolve_checkpoint,
        rewind_session,
        undo_last_change,
    )
    from engram.stores import StoreError

    words = rest.split()
    force = "--force" in words
    words = [w for w in words if w != "--force"]
    try:
        if command == "/undo":
            record = undo_last_change(engram, thread_id, force=force)
            out_console.print(f"undid {record.tool}: {', '.join(record.paths)}", markup=False)
            return
        target = words[0] if words else last_turn_start(engram, thread_id)
        checkpoint = (
            None if target == START else resolve_checkpoint(engram.checkpointer, thread_id, target)
        )
        outcome = rewind_session(
            engram, thread_id, checkpoint, code=True, conversation=True, force=force
        )
    except (SessionError, StoreError) as exc:
        hint = getattr(exc, "hint", "")
        out_console.print(f"{exc}" + (f" — {hint}" if hint else ""), markup=False)
        return
    out_console.print(
        rewind_message(outcome.files, outcome.conversation_checkpoint, target, outcome.held),
        markup=False,
    )


def _index(engram: App) -> None:
    from engram.graph.retrieval import open_project_index
    from engram.stores.relations import SharedFacts, update_relation_index

    index = open_project_index(engram.context, create=True)
    shared = SharedFacts()  # one parse per file serves both indexes
    stats = index.update(on_tree=shared.record)
    graph_stats = update_relation_index(
        engram.context.project_path, engram.context.state, shared=shared
    )
    engram.deps.forget("code_index", engram.context)
    engram.deps.forget("relation_index", engram.context)
    out_console.print(f"index updated: {stats}\ngraph updated: {graph_stats}")


def chat_loop(
    context: Context,
    thread_id: str,
    *,
    approve: Callable[[dict[str, Any]], dict[str, Any]],
    commit: bool = False,
) -> None:
    """Read user turns until /exit or Ctrl-D; Ctrl-C stops the running turn, not the session.

    With ``commit``, each finished turn that changed files is committed (``--commit``).
    """
    _setup_history(context)
    with open_app(context) as engram:
        thread_id = resolve_thread(engram.checkpointer, thread_id, new_ok=True)
        # The indexes load while the first line is typed; every line waits for the load, so
        # no turn's timed branch spends its time limit loading them (and no two threads import
        # the same modules at once).
        loading = threading.Thread(
            target=preload, args=(engram.deps, context), name="chat-preload", daemon=True
        )
        loading.start()
        out_console.print(f"[bold]engram[/] · session {thread_id} · {context.project_path}")
        out_console.print("[dim]/help for commands, /exit to leave[/]")
        while True:
            try:
                line = _read_line("engram> ")
                loading.join()
            except KeyboardInterrupt:
                out_console.print("\n[dim](Ctrl-C) type /exit to leave[/]")
                continue
            if line is None:
                break
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if not handle_slash(line, engram, thread_id):
                    break
                continue
            config = session_config(engram.checkpointer, thread_id, context, line)
            live = LiveView(out_console, err_console) if is_live() else None
            try:
                result = asyncio.run(
                    run_turn(
                        engram.graph,
                        config,
                        context,
                        {"messages": [HumanMessage(content=line)]},
                        console=err_console,
                        approve=approve,
                        live=live,
                    )
                )
            except KeyboardInterrupt:
                err_console.print(
                    "[yellow]turn interrupted; the session is saved up to the last finished step[/]"
                )
                continue
            except Exception as exc:  # a failed turn (the endpoint, the model's reply): say so
                found = known_failure(exc)
                if found is None:
                    raise
                report_error(found[0], found[1])
                err_console.print(
                    "[dim]the session is saved up to the last finished step; type the next line "
                    "to go on, or /exit[/]"
                )
                continue
            print_turn(result, context, thread_id, chat=True)
            if commit:
                commit_turn(context, thread_id, line, result)
    out_console.print(f"[dim]session saved: engram chat --thread {thread_id}[/]")
