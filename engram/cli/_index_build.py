"""Build or update a project's code index and relation index, with progress bars on stderr.

``engram index`` runs it, and so do the commands that index a project on first use
(``engram.cli._auto_index``); the work itself is ``engram.graph.retrieval.update_indexes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.cli._command_support import err_console

if TYPE_CHECKING:
    from rich.progress import TaskID

    from engram.graph import Context
    from engram.graph.retrieval import IndexRun
    from engram.stores.codeindex import IndexProgress
    from engram.stores.files import WalkReport


def build_index(context: Context, *, gc: bool = False, walk: WalkReport | None = None) -> IndexRun:
    """Update the project's code index and relation index, showing progress bars on stderr.

    Args:
        context: Run settings (the project, its state folder, the embedder).
        gc: Also collect the shared Chroma server's vectors no checkout uses.
        walk: The project walk, when the caller has just made it (else one is made).
    """
    from engram.cli._index_progress import index_progress
    from engram.graph.retrieval import update_indexes

    with index_progress(err_console) as bar:
        tasks: dict[str, TaskID] = {}

        def on_progress(event: IndexProgress) -> None:
            label = {"parse": "files parsed", "embed": "chunks embedded", "bm25": "BM25"}
            if event.phase not in tasks:
                tasks[event.phase] = bar.add_task(label[event.phase], total=event.total)
            bar.update(tasks[event.phase], completed=event.done, total=event.total)

        return update_indexes(context, progress=on_progress, gc=gc, walk=walk)
