"""The progress bars ``engram index`` shows while it parses, embeds and ranks the project."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second of a task."""

    def render(self, task: Task) -> Text:
        """Show the task's speed, or nothing before it has one."""
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="dim")


def index_progress(console: Console) -> Progress:
    """Return the transient bars of an index run (description, bar, count, rate, time left)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
