"""Keep the facts of files another pass parsed, so the relation index need not parse them again.

``engram index`` chunks every changed file for the code index and then updates the relation
index over the same walk. Both need the file's syntax tree; parsing is the costly part of both.
The chunking pass hands each tree it made to :meth:`SharedFacts.record`, which runs the
relation extractor on it at once and keeps only the (small) facts, never the tree. The relation
index then takes (:meth:`SharedFacts.take`) the facts of a file when they were extracted from
the very bytes it reads now, and parses the file itself otherwise (changed in between, not
valid UTF-8, or never parsed by the other pass).
"""

from __future__ import annotations

import logging

import tree_sitter

from engram.stores.relations._extraction import WALKERS, extract_tree
from engram.stores.relations._symbols import FileFacts, content_digest

log = logging.getLogger(__name__)


class SharedFacts:
    """Facts extracted from trees another pass parsed, by path, each with its content digest."""

    def __init__(self) -> None:
        self._facts: dict[str, FileFacts] = {}

    def __len__(self) -> int:
        return len(self._facts)

    def record(self, path: str, language: str, source: bytes, tree: tree_sitter.Tree) -> None:
        """Extract and keep the facts of ``path`` from ``tree``, parsed from ``source``.

        Languages without an extractor are ignored. Matches
        ``engram.stores.codeindex``'s ``TreeHook``, to be passed as its ``on_tree``.
        """
        if language not in WALKERS:
            return
        try:
            self._facts[path] = extract_tree(path, source, language, tree)
        except (RuntimeError, ValueError) as exc:
            # The relation index extracts the file again and reports the failure there, as
            # it would without sharing; the other pass must not fail for it.
            log.debug("engram: no shared facts for %s: %s", path, exc)
            self._facts.pop(path, None)

    def take(self, path: str, source: bytes) -> FileFacts | None:
        """Return and forget the facts of ``path`` if they were extracted from ``source``.

        Facts of other content (the file changed since they were recorded) are dropped, never
        returned.
        """
        facts = self._facts.pop(path, None)
        if facts is None or facts.digest != content_digest(source):
            return None
        return facts

    def adopt(self, earlier: SharedFacts) -> None:
        """Keep ``earlier``'s facts of the files this one has none of (``take`` checks each)."""
        for path, facts in earlier._facts.items():
            self._facts.setdefault(path, facts)
