"""``engram memory``: save, list, show, search, delete, verify, replace, export and import facts.

Facts a model proposed after reading untrusted content are quarantined: ``list --unverified``
shows them, ``verify ID`` confirms one (``--global`` to make it apply to every project) and
``delete ID`` rejects it.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from engram.cli._command_support import (
    fail,
    handle_errors,
    json_text,
    out_console,
    print_json,
    print_table,
    words,
)
from engram.cli._memory_command_support import JSON_HELP, PathOption, done, opened_memory
from engram.cli._memory_transfer_commands import export, import_

if TYPE_CHECKING:
    from engram.stores.memory import FactConflictError, ScoredFact

# The commands import the memory store (LangGraph, BM25, embeddings) when they run, not when the
# CLI starts: `engram --help` and the other commands should not pay for it.

EXIT_CONFLICT = 1
FactIdArgument = typer.Argument(
    ..., help="Id shown by `engram memory list` (a unique prefix will do)."
)


def register(app: typer.Typer) -> typer.Typer:
    """Add the ``memory`` command group to ``app`` and return the group.

    Other memory kinds (strategies, patterns, episodes) add their subgroups to the group
    this returns.
    """
    memory = typer.Typer(
        name="memory", help="Long-term facts: save, list, search, manage.", no_args_is_help=True
    )
    for name, command in (
        ("save", save),
        ("list", list_),
        ("show", show),
        ("search", search),
        ("delete", delete),
        ("verify", verify),
        ("replace", replace),
        ("export", export),
        ("import", import_),
    ):
        memory.command(name)(handle_errors(command))
    app.add_typer(memory, name="memory")
    return memory


def _batch_queries(batch: Path) -> list[tuple[Any, str]]:
    """Read ``{"id", "query"}`` lines; a missing file or a bad line fails naming the line."""
    example = '{"id": "q1", "query": "java version"}'
    try:
        lines = batch.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {batch}: {exc}", f"give a UTF-8 JSONL file of lines like {example}")
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(f"{batch} line {number} is not JSON: {exc.msg}", f"each line is like {example}")
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            fail(f'{batch} line {number} has no "query" text', f"each line is like {example}")
        queries.append((item.get("id"), item["query"]))
    return queries


def _scored(hit: ScoredFact) -> dict[str, Any]:
    return {**hit.fact.to_record(), "score": round(hit.score, 6)}


def save(
    text_words: Annotated[
        list[str], typer.Argument(metavar="TEXT", help="The fact to remember (quotes optional).")
    ],
    global_: bool = typer.Option(False, "--global", help="Visible in every project."),
    force: bool = typer.Option(False, "--force", help="Keep both facts on a conflict."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Remember a fact for this project (or every project with --global)."""
    from engram.stores import SecretRefusedError
    from engram.stores.memory import FactConflictError, FactStore

    text = words(text_words)
    with opened_memory(path) as (_, store, key):
        try:
            fact = FactStore(store).add(
                text,
                scope="global" if global_ else "project",
                project_key=key,
                source="user",
                force=force,
                provenance={"via": "engram memory save"},
                now=datetime.now(UTC),
            )
        except FactConflictError as error:
            _conflict_exit(error, as_json)
        except SecretRefusedError as error:
            fail(
                str(error),
                "save what to know without the value, e.g. where the credential is kept "
                "('the deploy token is in the CI secret DEPLOY_TOKEN'); engram never stores "
                "credentials",
            )
        except ValueError as error:
            fail(str(error), "give the fact as one plain sentence, e.g. 'tests run with tox'")
    if as_json:
        print_json({"saved": True, **fact.to_record()})
    else:
        out_console.print(f"saved [bold]{fact.id}[/] ({fact.scope}): {escape(fact.text)}")


def list_(
    all_projects: bool = typer.Option(False, "--all", help="Every project, not just this one."),
    unverified: bool = typer.Option(
        False,
        "--unverified",
        help="Only facts no person confirmed (quarantined ones first): confirm with "
        "`verify ID`, reject with `delete ID`.",
    ),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Show the facts visible in this project (global ones first), with their provenance."""
    from engram.stores.memory import all_facts, render_fact_line

    with opened_memory(path) as (_, store, key):
        facts = all_facts(store, project_key=None if all_projects else key)
    if unverified:
        facts = sorted(
            (f for f in facts if f.status != "verified"), key=lambda f: not f.quarantined
        )
    if as_json:
        print_json([f.to_record() for f in facts])
        return
    if not facts:
        out_console.print(
            "no unconfirmed facts"
            if unverified
            else "no facts yet; save one with `engram memory save TEXT`"
        )
    now = datetime.now(UTC)
    for fact in facts:
        out_console.print(render_fact_line(fact, now), markup=False)
    if any(f.quarantined for f in facts):
        out_console.print(
            "quarantined facts are used in no prompt: confirm one with "
            "`engram memory verify ID` (`--global` for every project) or reject "
            "it with `engram memory delete ID`",
            markup=False,
        )


def show(
    fact_id: str = FactIdArgument,
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Show one fact with its full provenance."""
    from engram.stores.memory import find_fact, provenance_mark

    with opened_memory(path) as (_, store, key):
        fact = find_fact(store, fact_id, project_key=key)
    if as_json:
        print_json(fact.to_record())
        return
    rows = [
        ("id", fact.id),
        ("text", fact.text),
        ("scope", fact.scope + (f" ({fact.project_key})" if fact.project_key else "")),
        ("status", fact.status),
        ("provenance", provenance_mark(fact)),
        ("created", fact.created.isoformat()),
        ("verified", fact.last_verified.isoformat() if fact.last_verified else "never"),
        *((f"  {name}", value) for name, value in sorted(fact.provenance.items())),
    ]
    for name, value in rows:
        out_console.print(f"{name + ':':<12} {value}", markup=False)


def search(
    query_words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="QUERY", help="What to look for (quotes optional; omit with --batch)."
        ),
    ] = None,
    k: int = typer.Option(10, "-k", min=1, help="How many facts to return."),
    batch: Annotated[
        Path | None,
        typer.Option(help='JSONL of {"id", "query"}; prints one {"id", "results"} line each.'),
    ] = None,
    dense: bool = typer.Option(
        True,
        "--dense/--no-dense",
        help="Re-rank by embedding similarity once more than a few hundred facts are visible.",
    ),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Search the facts visible in this project (BM25 with context; embeddings when large)."""
    query = words(query_words)
    if not query and batch is None:
        fail("give a QUERY or --batch FILE", "engram memory search 'java version'")
    # A bad batch file fails before any store is opened.
    queries = _batch_queries(batch) if batch is not None else None
    from engram.graph.retrieval import fact_embedder
    from engram.stores.memory import FactStore

    with opened_memory(path) as (context, store, key):
        facts = FactStore(store, embedder=fact_embedder(context) if dense else None)
        if queries is not None:
            for query_id, text in queries:
                hits = facts.search(text, project_key=key, k=k)
                row = {"id": query_id, "results": [_scored(h) for h in hits]}
                sys.stdout.write(json_text(row, indent=None) + "\n")
            sys.stdout.flush()
            return
        hits = facts.search(query, project_key=key, k=k)
    if as_json:
        print_json([_scored(h) for h in hits])
        return
    table = Table("id", "score", "scope", "fact", show_lines=False)
    for hit in hits:
        table.add_row(hit.fact.id, f"{hit.score:.3f}", hit.fact.scope, escape(hit.fact.text))
    if hits:
        print_table(table)
    else:
        out_console.print("no matching facts")


def delete(
    fact_id: str = FactIdArgument,
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Forget one fact."""
    from engram.stores.memory import delete_fact

    with opened_memory(path) as (_, store, key):
        fact = delete_fact(store, fact_id, project_key=key)
    done("deleted", fact.to_record(), as_json)


def verify(
    fact_id: str = FactIdArgument,
    global_: bool = typer.Option(False, "--global", help="Also make it apply to every project."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Confirm a fact is true: resets its staleness clock, releases it from quarantine."""
    from engram.stores.memory import verify_fact

    with opened_memory(path) as (_, store, key):
        fact = verify_fact(
            store,
            fact_id,
            project_key=key,
            now=datetime.now(UTC),
            scope="global" if global_ else None,
        )
    done("verified", fact.to_record(), as_json)


def replace(
    fact_id: str = FactIdArgument,
    text: str = typer.Argument(..., help="The new text."),
    force: bool = typer.Option(False, "--force", help="Ignore conflicts with other facts."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Replace a fact's text, keeping its id."""
    from engram.stores.memory import FactConflictError, replace_fact

    with opened_memory(path) as (_, store, key):
        try:
            fact = replace_fact(
                store, fact_id, text, project_key=key, now=datetime.now(UTC), force=force
            )
        except FactConflictError as error:
            _conflict_exit(error, as_json)
        except ValueError as error:
            fail(str(error), "engram memory replace ID 'the new text'")
    done("replaced", fact.to_record(), as_json)


def _conflict_exit(error: FactConflictError, as_json: bool) -> NoReturn:
    """Report a blocked write with both texts and the user's choices, then exit 1."""
    if as_json:
        print_json(
            {
                "saved": False,
                "text": error.text,
                "conflicts": [f.to_record() for f in error.conflicts],
            }
        )
        raise typer.Exit(EXIT_CONFLICT)
    listed = "\n".join(f"  {escape(f'[{f.id}]')} {escape(f.text)}" for f in error.conflicts)
    first = error.conflicts[0].id if error.conflicts else "ID"
    fail(
        f"not saved, it conflicts with:\n{listed}",
        escape(
            f"replace it with `engram memory replace {first} TEXT`, keep both with "
            "`engram memory save --force TEXT` (or `replace --force`), or keep things "
            "as they are"
        ),
        code=EXIT_CONFLICT,
    )
