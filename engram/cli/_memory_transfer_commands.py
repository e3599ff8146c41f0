"""``engram memory export`` and ``import``: facts as JSONL or Markdown, experience as folders."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from engram.cli._command_support import fail, out_console, print_json
from engram.cli._memory_command_support import JSON_HELP, PathOption, done, opened_memory

EXPORT_FORMATS = ("jsonl", "md", "experience")
IMPORT_FORMATS = ("jsonl", "experience")


def export(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Output file (jsonl, md; default stdout) or folder (experience; required)."
        ),
    ] = None,
    fmt: str = typer.Option(
        "jsonl",
        "--format",
        help="jsonl (facts, lossless backup), md (facts to read) or experience (a folder).",
    ),
    all_projects: bool = typer.Option(False, "--all", help="Every project, not just this one."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Export facts as JSONL (lossless: ids, dates, provenance) or Markdown, or experience."""
    from engram.stores.memory import all_facts, export_jsonl, export_markdown, facts_markdown

    if fmt not in EXPORT_FORMATS:
        fail(f"unknown format {fmt!r}", "use --format jsonl, md or experience")
    if fmt == "experience" and file is None:
        fail(
            "an experience export is a folder of Markdown files, and no folder was given",
            "name one: `engram memory export DIR --format experience`",
        )
    with opened_memory(path) as (_, store, key):
        if fmt == "experience" and file is not None:
            counts = export_markdown(store, key, file)
            done("exported", {"format": "experience", "dir": str(file), "counts": counts}, as_json)
            return
        facts = all_facts(store, project_key=None if all_projects else key)
    if fmt == "md":
        body = facts_markdown(facts)
    else:
        body = "".join(line + "\n" for line in export_jsonl(facts))
    if file is None:
        sys.stdout.write(body)
        return
    _write(file, body)
    done("exported", {"facts": len(facts), "format": fmt, "file": str(file)}, as_json)


def _write(file: Path, body: str) -> None:
    partial = file.with_name(file.name + ".partial")
    try:  # write beside, then rename: an existing backup is never left half-overwritten
        partial.write_text(body, encoding="utf-8")
        partial.replace(file)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        fail(f"cannot write {file}: {exc.strerror or exc}", "give a file in a writable folder")


def import_(
    file: Annotated[Path, typer.Argument(help="JSONL file (or experience folder) to restore.")],
    fmt: str = typer.Option(
        "jsonl", "--format", help="jsonl (facts) or experience (a folder from export)."
    ),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Restore facts as-is (ids kept, no conflict checks); minimal {id,text,scope} lines work."""
    from engram.stores.memory import import_jsonl, import_markdown

    if fmt == "md":
        fail(
            "a Markdown export of facts is for reading and cannot be restored",
            "restore facts from a JSONL export (the default --format), or an experience "
            "folder with --format experience",
        )
    if fmt not in IMPORT_FORMATS:
        fail(f"unknown format {fmt!r}", "use --format jsonl or --format experience")
    if not file.exists():
        fail(f"{file} does not exist", "give the path of a file written by `engram memory export`")
    lines: list[str] = []
    if fmt == "jsonl":
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            fail(
                f"cannot read {file}: {reason}",
                'give a JSONL file of facts, one {"id", "text", "scope"} object per line',
            )
    with opened_memory(path) as (_, store, key):
        if fmt == "experience":
            try:
                md_report = import_markdown(store, key, file)
            except (ValueError, FileNotFoundError) as exc:
                fail(
                    str(exc),
                    "give the folder written by `engram memory export DIR --format experience`",
                )
            done(
                "imported",
                {"format": "experience", "dir": str(file), "counts": md_report.counts},
                as_json,
            )
            return
        report = import_jsonl(store, lines, project_key=key, now=datetime.now(UTC))
    summary = {
        "imported": report.imported,
        "skipped": [{"line": n, "reason": r} for n, r in report.skipped],
    }
    if as_json:
        print_json(summary)
        return
    out_console.print(f"imported {report.imported} facts", markup=False)
    for number, reason in report.skipped:
        out_console.print(f"  skipped line {number}: {reason}", markup=False)
