"""Map file names to tree-sitter languages and hand out parsers (official grammar wheels)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath

import tree_sitter


@dataclass(frozen=True)
class Grammar:
    """A supported language: its name, file suffixes and how to load its grammar."""

    name: str
    suffixes: tuple[str, ...]
    load: Callable[[], object]


def _python() -> object:
    import tree_sitter_python

    return tree_sitter_python.language()


def _java() -> object:
    import tree_sitter_java

    return tree_sitter_java.language()


def _javascript() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _go() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


LANGUAGES: tuple[Grammar, ...] = (
    Grammar("python", (".py", ".pyi"), _python),
    Grammar("java", (".java",), _java),
    Grammar("javascript", (".js", ".jsx", ".mjs", ".cjs"), _javascript),
    Grammar("typescript", (".ts", ".mts", ".cts"), _typescript),
    Grammar("tsx", (".tsx",), _tsx),
    Grammar("go", (".go",), _go),
)

_BY_SUFFIX = {suffix: g for g in LANGUAGES for suffix in g.suffixes}


def language_of(path: str | PurePath) -> str | None:
    """Return the language name for a file path, or None when it is not a parsed language."""
    grammar = _BY_SUFFIX.get(PurePath(path).suffix.lower())
    return grammar.name if grammar else None


def grammar_for(name: str) -> Grammar:
    """Return the grammar entry for a language name.

    Raises:
        KeyError: The language is not supported.
    """
    for g in LANGUAGES:
        if g.name == name:
            return g
    raise KeyError(name)


@cache
def _language(name: str) -> tree_sitter.Language:
    # Grammar objects are immutable and cheap to share; loading one costs a dlopen.
    return tree_sitter.Language(grammar_for(name).load())


def parse(source: bytes, language: str) -> tree_sitter.Tree:
    """Parse ``source`` with the grammar of ``language`` and return the syntax tree."""
    parser = tree_sitter.Parser(_language(language))
    return parser.parse(source)
