"""``engram memory export`` and ``import``: facts as JSONL, experience as Markdown folders."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from engram.cli.command_support import fail, out_console, print_json
from engram.cli.memory_command_support import JSON_HELP, PathOption, done, opened_memory

__all__ = ["FORMATS", "export", "import_"]

FORMATS = ("jsonl", "md")


def export(
    file: Annotated[
        Path | None,
        typer.Argument(help="Output file (jsonl; default stdout) or folder (md; default .)."),
    ] = None,
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (facts) or md (experience)."),
    all_projects: bool = typer.Option(False, "--all", help="Every project, not just this one."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Export facts as JSONL (lossless: ids, dates, provenance) for audit and backup."""
    from engram.stores.memory.experience_markdown import export_markdown
    from engram.stores.memory.fact_admin import all_facts, export_jsonl

    _check_format(fmt)
    with opened_memory(path) as (_, store, key):
        if fmt == "md":
            target = file or Path(".")
            counts = export_markdown(store, key, target)
            done("exported", {"format": "md", "dir": str(target), "counts": counts}, as_json)
            return
        lines = list(export_jsonl(all_facts(store, project_key=None if all_projects else key)))
    body = "".join(line + "\n" for line in lines)
    if file is None:
        sys.stdout.write(body)
        return
    partial = file.with_name(file.name + ".partial")
    try:  # write beside, then rename: an existing backup is never left half-overwritten
        partial.write_text(body, encoding="utf-8")
        partial.replace(file)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        fail(f"cannot write {file}: {exc.strerror or exc}", "give a file in a writable folder")
    done("exported", {"facts": len(lines), "file": str(file)}, as_json)


def import_(
    file: Annotated[Path, typer.Argument(help="JSONL file (or md folder) to restore.")],
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (facts) or md (experience)."),
    path: PathOption = None,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Restore facts as-is (ids kept, no conflict checks); minimal {id,text,scope} lines work."""
    from engram.stores.memory.experience_markdown import import_markdown
    from engram.stores.memory.fact_admin import import_jsonl

    _check_format(fmt)
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
        if fmt == "md":
            try:
                md_report = import_markdown(store, key, file)
            except (ValueError, FileNotFoundError) as exc:
                fail(str(exc), "give the folder written by `engram memory export DIR --format md`")
            done(
                "imported", {"format": "md", "dir": str(file), "counts": md_report.counts}, as_json
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


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r}", "use --format jsonl or --format md")
