"""Extract one file's facts: run its language's walker over its syntax tree."""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter

from engram.stores.files import parse
from engram.stores.relations import _extract_go, _extract_java, _extract_js, _extract_python
from engram.stores.relations._symbols import FactsBuilder, FileFacts, content_digest

Walker = Callable[[tree_sitter.Node, FactsBuilder], None]

WALKERS: dict[str, Walker] = {
    "python": _extract_python.walk,
    "java": _extract_java.walk,
    "javascript": _extract_js.walk,
    "typescript": _extract_js.walk,
    "tsx": _extract_js.walk,
    "go": _extract_go.walk,
}
"""Language name to the walker that records its definitions, imports and references."""


def extract_file(path: str, source: bytes, language: str) -> FileFacts:
    """Parse ``source`` and return its facts.

    Args:
        path: Posix path relative to the project root.
        source: File content.
        language: A name from ``engram.stores.files.language_of``.

    Raises:
        KeyError: ``language`` has no extractor.
    """
    walker = WALKERS[language]  # before parsing: a language without extractor costs nothing
    return _walk(walker, path, source, language, parse(source, language))


def extract_tree(path: str, source: bytes, language: str, tree: tree_sitter.Tree) -> FileFacts:
    """Return the facts of ``source`` from ``tree``, its syntax tree parsed already.

    Args:
        path: Posix path relative to the project root.
        source: The bytes ``tree`` was parsed from.
        language: The language ``tree`` was parsed with.
        tree: ``parse(source, language)``, as another pass over the file made it.

    Raises:
        KeyError: ``language`` has no extractor.
    """
    return _walk(WALKERS[language], path, source, language, tree)


def _walk(
    walker: Walker, path: str, source: bytes, language: str, tree: tree_sitter.Tree
) -> FileFacts:
    builder = FactsBuilder(source)
    walker(tree.root_node, builder)
    return builder.build(path, language, content_digest(source))
