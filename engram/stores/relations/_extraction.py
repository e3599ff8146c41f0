"""Extract one file's facts: parse it and run its language's walker."""

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
    walker = WALKERS[language]
    builder = FactsBuilder(source)
    walker(parse(source, language).root_node, builder)
    return builder.build(path, language, content_digest(source))
