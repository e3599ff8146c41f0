"""Exact evidence for a query: pull identifiers, quoted strings and paths out, grep, locate.

Shared by hybrid search (lines mapped to indexed chunks) and by index-free exact search (lines
mapped to chunks cut on the fly).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.stores.codeindex._chunker import chunk_file
from engram.stores.codeindex._hits import CodeHit
from engram.stores.codeindex._ignore_check import IgnoreFileCheck
from engram.stores.codeindex._ripgrep import GrepMatch, grep
from engram.stores.files import FileDerived, confine, read_text

MAX_TERMS = 12
"""Terms taken from one query; the first ones are kept."""

MIN_PLAIN_QUOTED_CHARS = 8
"""A quoted plain word (``str``, ``name``) is a term only from this length on: short ones
occur everywhere in code and would flood the search."""

MAX_GREP_LINES = 2000
"""Matching lines read per ripgrep pass (a second pass looks for terms the first missed)."""
MAX_LOCATED_FILES = 60
"""Files chunked on the fly by one index-free exact search."""
MIN_EXACT_FILES = 10
"""Files whose matches are located chunk by chunk in an index-free exact search."""

DEFINITION_BONUS = 1.0
"""Added to a chunk's exact score when its own name is one of the terms."""

_QUOTED = re.compile(r"`([^`\n]{2,80})`|\"([^\"\n]{3,80})\"|'([^'\n]{3,80})'")
_WORDISH = re.compile(r"[A-Za-z_][\w.]*(?:/[\w.\-]+)*\(?")
_URL = re.compile(r"\b\w+://\S+")
_SNAKE = re.compile(r"^_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*$")
_CAMEL = re.compile(r"^[a-z]+[A-Z]\w*$|^[A-Z][a-z0-9]+[A-Z]\w*$|^[A-Z]{2,}[a-z]\w*$")
_SOURCE_SUFFIXES = (".py", ".java", ".js", ".ts", ".tsx", ".jsx", ".go", ".md", ".toml", ".json")
_RG_META = set("\\.+*?()|[]{}^$#&-~")


@dataclass(frozen=True)
class Located:
    """The chunk around a matching line."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    key: str
    """Identity of the chunk (its id when indexed)."""


def _is_code_like(word: str) -> bool:
    if "/" in word or word.endswith(_SOURCE_SUFFIXES):
        return True
    if word.endswith("("):
        return len(word) > 3
    parts = word.split(".")
    if len(parts) > 1 and all(parts) and any(_SNAKE.match(p) or _CAMEL.match(p) for p in parts):
        return True
    return bool(_SNAKE.match(word) or _CAMEL.match(word))


def exact_terms(text: str) -> list[str]:
    """Return literal search terms found in free text, in order of first appearance.

    Terms are quoted strings (backticks or quotes), code-like identifiers (snake_case,
    camelCase, PascalCase with two humps, dotted names, calls ``name(``) and file paths.
    Plain words are not terms: they are left to BM25 and dense search.
    """
    text = _URL.sub(" ", text)
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        raw = next(g for g in match.groups() if g).strip()
        term = raw.removesuffix("()")
        if " " in term:
            if _is_code_like(term.split()[0]):
                found.append(term)
        elif raw != term or _is_code_like(term) or not term.isalpha():
            found.append(term)
        elif len(term) >= MIN_PLAIN_QUOTED_CHARS:
            found.append(term)
    for match in _WORDISH.finditer(_QUOTED.sub(" ", text)):
        word = match.group(0).rstrip(".")
        if not _is_code_like(word):
            continue
        word = word.rstrip("(")
        found.append(word)
        if "." in word and "/" not in word and not word.endswith(_SOURCE_SUFFIXES):
            found.append(word.rsplit(".", 1)[1])
    terms = [t for t in dict.fromkeys(found) if len(t) >= 3]
    return terms[:MAX_TERMS]


def _rg_escape(term: str) -> str:
    return "".join("\\" + c if c in _RG_META else c for c in term)


def grep_terms(
    root: Path,
    terms: list[str],
    locate: Callable[[str, int], Located | None],
    *,
    max_files: int | None = None,
    ignore_check: IgnoreFileCheck | None = None,
    as_text: bool = False,
) -> list[tuple[Located, float]]:
    """Grep all terms in one ripgrep pass and score the chunks holding the matches.

    A term weighs ``1 / log2(1 + files containing it)``, so rare terms count most. Files are
    ranked by the weights of the terms they contain and only the best ``max_files`` are
    looked at chunk by chunk (locating is the costly part). A chunk scores the weights of the
    terms it contains, plus DEFINITION_BONUS when its own name is one of them.

    ``ignore_check`` is handed to ``grep``. With ``as_text``, terms that look like paths are
    grepped as text too instead of matched against the project's files.

    Returns:
        (chunk, score) pairs, best first.
    """
    if not terms:
        return []
    path_terms = [] if as_text else [t for t in terms if is_path_term(t)]
    code_terms = [t for t in terms if t not in path_terms]
    lines: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    if code_terms:
        for match in _grep_all(root, code_terms, ignore_check):
            found = tuple(t for t in code_terms if t in match.text)
            if found:
                lines.setdefault(match.path, []).append((match.line, found))
    for term in path_terms:
        if (root / term.strip("/")).is_file():
            lines.setdefault(term.strip("/"), []).append((1, (term,)))
    files_with: dict[str, int] = {}
    for hits in lines.values():
        for term in {t for _, found in hits for t in found}:
            files_with[term] = files_with.get(term, 0) + 1
    weight = {t: 1.0 / math.log2(1 + n) for t, n in files_with.items()}
    file_score = {
        path: sum(weight[t] for t in {t for _, found in hits for t in found})
        for path, hits in lines.items()
    }
    ranked_files = sorted(file_score, key=lambda p: (-file_score[p], p))
    if max_files is not None:
        ranked_files = ranked_files[:max_files]
    term_chunks: dict[str, list[Located]] = {}
    for path in ranked_files:
        for line, found in lines[path]:
            located = locate(path, line)
            if located is not None:
                for term in found:
                    term_chunks.setdefault(term, []).append(located)
    return score_term_chunks(term_chunks, weight)


def _grep_all(
    root: Path, terms: list[str], ignore_check: IgnoreFileCheck | None = None
) -> list[GrepMatch]:
    """Grep the terms in one pass; if a common term filled the line cap, grep the unseen ones.

    Lines come in path order, so a term on thousands of lines could hide a rare term that
    only occurs later in the tree; the second pass (only the terms the first did not see)
    finds it.
    """
    matches = grep(root, _pattern(terms), max_results=MAX_GREP_LINES, ignore_check=ignore_check)
    if len(matches) < MAX_GREP_LINES:
        return matches
    unseen = [t for t in terms if not any(t in m.text for m in matches)]
    if unseen:
        matches += grep(
            root, _pattern(unseen), max_results=MAX_GREP_LINES, ignore_check=ignore_check
        )
    return matches


def _pattern(terms: list[str]) -> str:
    return "|".join(_rg_escape(t) for t in sorted(terms, key=len, reverse=True))


def is_path_term(term: str) -> bool:
    """Return True for terms that name a file rather than an identifier.

    A term with white space is never a path: ``percent / 10`` is code to grep for.
    """
    if any(c.isspace() for c in term):
        return False
    return "/" in term or term.endswith(_SOURCE_SUFFIXES)


def score_term_chunks(
    term_chunks: Mapping[str, Iterable[Located]], weight: Mapping[str, float] | None = None
) -> list[tuple[Located, float]]:
    """Score chunks by the terms they contain (rarer terms weigh more) and rank them.

    Args:
        term_chunks: For each term, the chunks that contain it.
        weight: Weight per term; by default ``1 / log2(1 + files containing the term)``.

    Returns:
        (chunk, score) pairs, best first; a chunk whose own name is a term gains
        DEFINITION_BONUS.
    """
    if weight is None:
        weight = {
            t: 1.0 / math.log2(1 + len({c.path for c in chunks}))
            for t, chunks in term_chunks.items()
            if chunks
        }
    chunks: dict[str, Located] = {}
    terms_in: dict[str, set[str]] = {}
    for term, located in term_chunks.items():
        for chunk in located:
            chunks[chunk.key] = chunk
            terms_in.setdefault(chunk.key, set()).add(term)
    scores: dict[str, float] = {}
    for key, found_terms in terms_in.items():
        name = chunks[key].symbol.split("(", 1)[0].rsplit(".", 1)[-1]
        defines = any(name == t.rsplit(".", 1)[-1] for t in found_terms)
        scores[key] = sum(weight[t] for t in found_terms) + (DEFINITION_BONUS if defines else 0)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(chunks[key], score) for key, score in ranked]


def locate_on_the_fly(
    root: Path,
    max_files: int = MAX_LOCATED_FILES,
    *,
    known: FileDerived[list[Located]] | None = None,
) -> Callable[[str, int], Located | None]:
    """Return a locator that chunks matched files when first needed (no index required).

    After ``max_files`` files have been chunked, further matches are reported as single
    lines, which bounds the cost of very common terms. With ``known``, a file's chunks are
    taken from earlier searches while the file is unchanged (the same chunks either way).
    """
    cache: dict[str, list[Located]] = {}
    root = root.resolve()

    def chunks_of(path: str) -> list[Located]:
        file = confine(root, path)

        def chunk() -> list[Located]:
            return [
                Located(c.path, c.start_line, c.end_line, c.symbol, c.kind, c.id)
                for c in chunk_file(path, read_text(file))
            ]

        return chunk() if known is None else known.get((str(root), path), file, chunk)

    def locate(path: str, line: int) -> Located | None:
        if path not in cache and len(cache) >= max_files:
            return Located(path, line, line, "", "line", f"{path}:{line}")
        if path not in cache:
            try:
                cache[path] = chunks_of(path)
            except OSError:
                return None
        return smallest_containing(cache[path], line)

    return locate


def smallest_containing(chunks: Sequence[Located], line: int) -> Located | None:
    """Return the narrowest chunk whose line range holds ``line``."""
    best: Located | None = None
    for chunk in chunks:
        if chunk.start_line <= line <= chunk.end_line and (
            best is None or chunk.end_line - chunk.start_line < best.end_line - best.start_line
        ):
            best = chunk
    return best


def exact_search_hits(
    root: Path, query: str, k: int, ignore_check: IgnoreFileCheck | None = None
) -> list[CodeHit]:
    """Search without an index: grep the query's code-like terms, else the query itself.

    When the terms find nothing (or the query has none, like ``percent / 10``), the whole
    query is searched as literal text, as ``rg -F`` would.
    """
    locate = locate_on_the_fly(root)
    max_files = max(k, MIN_EXACT_FILES)
    literal = query.strip()
    terms = exact_terms(query)
    located = grep_terms(root, terms, locate, max_files=max_files, ignore_check=ignore_check)
    if not located and literal:
        located = grep_terms(
            root, [literal], locate, max_files=max_files, ignore_check=ignore_check, as_text=True
        )
    return [
        CodeHit(loc.path, loc.start_line, loc.end_line, loc.symbol, loc.kind, round(s, 6), "exact")
        for loc, s in located[:k]
    ]
