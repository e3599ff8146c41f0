"""``engram doctor``: check every store and index, rebuild what can be rebuilt, report the rest."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from engram.cli._command_support import (
    EXIT_FAILURE,
    handle_errors,
    load_context,
    print_json,
    print_table,
)

if TYPE_CHECKING:
    from engram.graph import Context
    from engram.stores import Health

PathOption = typer.Option(None, "--path", "-p", help="Project root (default: current folder).")
STATUS_STYLE = {"ok": "green", "missing": "dim", "broken": "bold red", "repaired": "yellow"}


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command to the root command."""
    app.command("doctor")(doctor_command)


@handle_errors
def doctor_command(
    path: Path | None = PathOption,
    repair: bool = typer.Option(
        True, "--repair/--no-repair", help="Rebuild a broken code index or graph (never memory)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check memory, sessions, the code index and relation index; rebuild what can be rebuilt.

    Sessions and memory are checked where they live: the SQLite files in ENGRAM_HOME, or the
    Postgres server ENGRAM_DATABASE_URL names; the code index's vectors on the Chroma server
    ENGRAM_CHROMA_URL names, when one does. A server that is down fails the check.
    """
    from engram.stores import check_chroma, check_graph, check_home, check_postgres
    from engram.stores.sqlite import database_url

    context = load_context(path)
    url = database_url()
    found = check_home(context.home_path, databases=not url)
    if url:
        found.append(check_postgres(url))
    found.append(_sandbox_health(context))
    found.append(model_health(context))
    chroma = check_chroma(context.chroma_url) if context.chroma_url else None
    if chroma is not None:
        found.append(chroma)
    if context.state.path("index").exists():
        index = _index_health(context, server_up=chroma is None or chroma.status == "ok")
        found += [index, check_graph(context.project_path, context.state)]
    if repair:
        found = _repair(context, found)
    if as_json:
        print_json([asdict(h) for h in found])
    else:
        table = Table(show_edge=False, pad_edge=False)
        for column in ("store", "status", "path", "detail"):
            table.add_column(column)
        for h in found:
            style = STATUS_STYLE[h.status]
            table.add_row(h.store, f"[{style}]{h.status}[/]", h.path, h.detail)
        print_table(table)
    if any(h.status == "broken" for h in found):
        raise typer.Exit(EXIT_FAILURE)


MODEL_CHECK_TIMEOUT_S = 5.0
"""How long doctor waits for the model endpoint's list of models."""


def model_health(context: Context, env: Mapping[str, str] | None = None) -> Health:
    """Check the model endpoint ``run`` and ``chat`` would call: reachable, key taken, model.

    One ``GET {base_url}/models`` with the API key (nothing is generated, nothing billed).
    No model configured is no failure (the context engine needs none); an endpoint that cannot
    be reached or refuses the key is broken, since every agent turn would fail.
    """
    import httpx

    from engram.stores import Health, mask_url_passwords

    if not context.model:
        return Health(
            "model", "", "missing", "no model configured (ENGRAM_MODEL): run and chat need one"
        )
    provider, sep, name = context.model.partition(":")
    if sep and provider != "openai":
        return Health("model", context.model, "ok", f"{provider}: checked on its first call")
    model = name if sep else context.model
    base = (context.base_url or "https://api.openai.com/v1").rstrip("/")
    shown = mask_url_passwords(base, [base])
    environ = os.environ if env is None else env
    key = environ.get("OPENAI_API_KEY", "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        reply = httpx.get(f"{base}/models", headers=headers, timeout=MODEL_CHECK_TIMEOUT_S)
    except httpx.HTTPError as exc:
        reason = mask_url_passwords(str(exc) or type(exc).__name__, [base])
        return Health(
            "model",
            shown,
            "broken",
            f"cannot reach the model endpoint ({reason}): check ENGRAM_BASE_URL and the server",
        )
    if reply.status_code in (401, 403):
        return Health(
            "model",
            shown,
            "broken",
            f"the endpoint refused the API key (HTTP {reply.status_code}): check OPENAI_API_KEY",
        )
    if reply.status_code >= 400:  # some endpoints do not list models; the chat route may work
        return Health(
            "model", shown, "ok", f"{model}: reachable (no model list: HTTP {reply.status_code})"
        )
    try:
        listed = {str(m.get("id")) for m in reply.json().get("data", []) if isinstance(m, dict)}
    except (ValueError, AttributeError):
        listed = set()
    if listed and model not in listed:  # an alias may still answer: say so, do not fail
        return Health(
            "model",
            shown,
            "ok",
            f"{model}: reachable, but not among its {len(listed)} listed models "
            "(check ENGRAM_MODEL if calls fail)",
        )
    return Health("model", shown, "ok", f"{model}: " + ("listed" if listed else "reachable"))


def _sandbox_health(context: Context) -> Health:
    """Say which sandbox commands get here (missing is no failure: approval still guards)."""
    from engram.graph import SandboxUnavailableError, sandbox_for
    from engram.stores import Health

    try:
        sandbox = sandbox_for(context)
    except SandboxUnavailableError as exc:
        return Health("sandbox", "", "broken", f"{exc}; {exc.hint}", False)
    if sandbox.kind == "none":
        return Health("sandbox", "", "missing", sandbox.reason, False)
    return Health("sandbox", sandbox.program, "ok", sandbox.label, False)


def _index_health(context: Context, *, server_up: bool) -> Health:
    """Check the index folder, then that its vectors open (Chroma keeps its own files).

    With a Chroma server (``server_up``: it answered), the project's collection on it must
    hold the vectors of the indexed chunks.
    """
    from engram.graph.retrieval import open_project_index
    from engram.stores import StoreError, check_index
    from engram.stores.codeindex import INDEX_DIR

    health = check_index(context.project_path, context.state.path(INDEX_DIR))
    if health.status != "ok" or (context.chroma_url and not server_up):
        return health
    if context.chroma_url:
        return _collection_health(context, health)
    try:
        index = open_project_index(context)
        try:
            missing = index.missing_vectors()
        finally:
            index.close()
    except (StoreError, OSError, RuntimeError, ValueError) as exc:
        return replace(health, status="broken", detail=f"vectors unreadable: {exc}")
    if missing:
        return replace(health, status="broken", detail=f"{missing} chunks have no vector")
    return health


def _collection_health(context: Context, health: Health) -> Health:
    """Check that the Chroma server holds vectors for the project's indexed chunks."""
    from engram.graph.retrieval import open_project_index, vector_outage
    from engram.stores import StoreError

    try:
        index = open_project_index(context)
        try:
            outage = vector_outage(index)
            chunks = index.manifest.chunk_ids()
            stored = set() if outage else index.vectors.ids() & chunks
        finally:
            index.close()
    except (StoreError, OSError, RuntimeError, ValueError) as exc:
        return replace(health, status="broken", detail=f"vectors unreadable: {exc}")
    if outage:
        return replace(health, status="broken", detail=outage)
    if chunks and not stored:
        return replace(
            health,
            status="broken",
            detail=f"the Chroma server holds no vectors for this project's {len(chunks)} "
            "chunks (its collection is missing or empty): run `engram index`",
        )
    if len(stored) < len(chunks):
        return replace(
            health,
            status="broken",
            detail=f"{len(chunks) - len(stored)} of {len(chunks)} chunks have no vector on the "
            "Chroma server (removed there, e.g. by a collection): semantic search misses them "
            "until `engram index` embeds them again",
        )
    return replace(health, detail=f"{len(stored)} of {len(chunks)} chunks have vectors on Chroma")


def _repair(context: Context, found: list[Health]) -> list[Health]:
    """Rebuild a broken code index or graph from the files; leave everything else alone."""
    from engram.graph.retrieval import open_project_index
    from engram.stores.codeindex import INDEX_DIR, release_embedded_chroma
    from engram.stores.project import claim_index_dir
    from engram.stores.relations import SharedFacts, update_relation_index

    out: list[Health] = []
    server_down = any(h.store == "chroma" and h.status == "broken" for h in found)
    for health in found:
        if health.status != "broken" or not health.repairable:
            out.append(health)
            continue
        if health.store == "code index":
            if server_down:  # its vectors can only be rebuilt on a server that answers
                out.append(health)
                continue
            release_embedded_chroma()
            root = context.project_path
            claim_index_dir(
                context.state.path(INDEX_DIR), root, home=context.home_path, discard=True
            )
            index = open_project_index(context, create=True)
            shared = SharedFacts()  # one parse per file serves both indexes
            try:
                stats = index.update(on_tree=shared.record)
            finally:
                index.close()
            update_relation_index(root, context.state, shared=shared)
            detail = f"rebuilt: {stats.files} files, {stats.chunks} chunks"
        else:
            stats_graph = update_relation_index(context.project_path, context.state)
            detail = f"rebuilt: {stats_graph.files} files"
        out.append(replace(health, status="repaired", detail=detail))
    return out
