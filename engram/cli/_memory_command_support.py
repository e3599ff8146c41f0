"""What the ``engram memory`` commands share: the common options, the store, the reply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from engram.cli._command_support import load_context, out_console, print_json
from engram.stores.project import memory_key

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from engram.graph import Context

PATH_HELP = "Project root (default: current folder)."
JSON_HELP = "Print JSON instead of text."

PathOption = Annotated[Path | None, typer.Option("--path", "-p", help=PATH_HELP)]


@contextmanager
def opened_memory(path: Path | None) -> Iterator[tuple[Context, BaseStore, str]]:
    """Yield the run settings, the memory store and the project key for ``--path``."""
    from engram.stores.sqlite import database_url, open_memory_store

    context = load_context(path)
    with open_memory_store(context.home_path, database_url()) as store:
        yield context, store, memory_key(context.project_path, context.home_path)


def done(verb: str, record: dict[str, Any], as_json: bool) -> None:
    """Print what a command did: a JSON record, or one line naming it."""
    if as_json:
        print_json({"action": verb, **record})
    else:
        label = record.get("id") or record.get("file") or record.get("dir") or ""
        out_console.print(f"{verb} {label} {record.get('text', '')}".rstrip(), markup=False)
