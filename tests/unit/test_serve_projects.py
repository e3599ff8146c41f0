"""The warm server holds at most ``MAX_PROJECTS`` projects open, closing the least recently used."""

from __future__ import annotations

from pathlib import Path

from engram.cli._command_support import load_context
from engram.cli._serve_projects import MAX_PROJECTS, WarmProjects
from engram.stores.relations import GRAPH_FILE


class Opened:
    """A stand-in resource that records whether the keeper closed it."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_least_recently_used_project_is_closed_beyond_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    contexts = []
    for number in range(MAX_PROJECTS + 1):
        root = tmp_path / f"p{number}"
        root.mkdir()
        context = load_context(root)
        graph = Path(context.state.path(*GRAPH_FILE.parts))
        graph.parent.mkdir(parents=True, exist_ok=True)
        graph.write_text("")
        contexts.append(context)
    warm = WarmProjects()
    opened: dict[str, Opened] = {}

    def opener(context):
        opened[str(context.project_path)] = Opened()
        return opened[str(context.project_path)]

    for context in contexts[:MAX_PROJECTS]:
        warm.keep("relation_index", context, opener)
    first = opened[str(contexts[0].project_path)]
    assert warm.keep("relation_index", contexts[0], opener) is first  # used again: now newest
    warm.keep("relation_index", contexts[MAX_PROJECTS], opener)
    held = warm.projects()
    assert len(held) == MAX_PROJECTS
    assert str(contexts[1].project_path) not in held  # the least recently used
    assert opened[str(contexts[1].project_path)].closed
    assert not first.closed and str(contexts[0].project_path) in held
    warm.close()
    assert all(resource.closed for resource in opened.values())
