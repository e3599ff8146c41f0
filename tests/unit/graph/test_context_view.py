"""The readable ``engram context`` output: why each file is in, and what each slice shows."""

from __future__ import annotations

from engram.cli import _context_commands as context_commands
from engram.cli._context_commands import short_why, show_pack


def test_why_names_each_ranking_once_then_what_it_matched():
    assert (
        short_why(
            [
                "localizer #1: Doc.load(self, path)",
                "bm25 #10: Doc.load(self, path)",
                "graph #3: Cell",
            ]
        )
        == "localizer #1, bm25 #10, graph #3: Doc.load, Cell"
    )
    assert short_why(["named"]) == "named"


def test_a_cut_slice_lists_the_lines_it_shows(monkeypatch):
    printed: list[str] = []
    monkeypatch.setattr(context_commands, "print_table", lambda table: None)
    monkeypatch.setattr(context_commands.out_console, "print", printed.append)
    item = {
        "path": "a.py",
        "start_line": 10,
        "end_line": 90,
        "symbol": "f",
        "score": 1.0,
        "reasons": [],
        "shown": [[10, 20], [80, 90]],
    }
    show_pack(
        {
            "tokens": 5,
            "budget": 9,
            "notes": [],
            "sections": [{"name": "slices", "tokens": 5, "budget": 9, "items": [item]}],
        }
    )
    assert printed == ["[dim]slice[/] a.py:10-90 f (lines 10-20, 80-90)"]
