"""Read an issue like an engineer: tracebacks, paths, modules, identifiers, flags, prose.

A bug report is not a bag of words. Its stack frames and links name files, its backticked names
and error messages name code, and its template (HTML comments, checklists) names nothing at all.
``read_issue`` separates these so that ranking can weigh each by what it is worth: a file named
in a traceback counts for more than a word of prose. Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from engram.stores.codeindex._exact import exact_terms

MAX_IDENTIFIERS = 40
"""Identifiers kept from one issue, in order of first appearance (title first)."""

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CHECKBOX = re.compile(r"^[ \t]*[-*]\s*\[[ xX]\].*$", re.M)
_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?')
_JS_JAVA_FRAME = re.compile(r"\bat\s+(?:[\w$.<>]+\s+)?\(?([\w./\\:-]+\.\w+):(\d+)(?::\d+)?\)?")
_PATH_RUN = re.compile(r"[\w./\\-]+")
_PATH_END = re.compile(r"(?<=[\w-])\.(?:py|pyi|pyx|js|jsx|ts|tsx|java|go|rs|c|h|cpp|rb)(?!\w)")
"""A source file name's end. A run of path characters up to its last such end is a path:
found in two linear passes, as one regex backtracked over a long run of name characters
(20,000 took 11 s)."""
_SOURCE_URL = re.compile(
    r"https?://[^\s)>\]]*/(?:blob|tree|raw)/[^/\s]+/([^\s#?)>\]]+)"
    r"(?:#L(\d+))?"
)
_DIFF_PATH = re.compile(r"^(?:diff --git a/\S+ b/|\+\+\+ b/|--- a/)(\S+)", re.M)
_URL = re.compile(r"\bhttps?://([^\s/)>\]]+)([^\s)>\]]*)")
_DOTTED_MODULE = re.compile(r"\b([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){1,6})\b")
_IMPORT = re.compile(
    r"(?:^|`)[ \t>]*(?:from\s+([\w.]+)\s+import\s+([\w, ()]+)|import\s+([\w., ]+))", re.M
)
_NOT_MODULES = ("self.", "cls.")
_FLAG = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]{2,})\b")
_ERROR_LINE = re.compile(
    r"^[ \t]*(?:[\w.]+\.)?(\w*(?:Error|Exception|Warning|Exit))\b:?\s*(.*)$", re.M
)
_BRACKET_TAG = re.compile(r"\[([A-Za-z][\w .:-]{1,40})\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
_GENERIC_HOST_PARTS = frozenset({"www", "com", "org", "net", "io", "http", "https", "m", "en"})


@dataclass(frozen=True)
class Frame:
    """One stack-trace frame: the file, its line and the function, as the trace wrote them."""

    path: str
    line: int
    function: str = ""


@dataclass(frozen=True)
class IssueSignals:
    """What an issue says about where the code is, by kind of evidence."""

    title: str
    """The first line (issue titles are the densest statement of the problem)."""
    frames: tuple[Frame, ...] = ()
    """Stack frames, innermost (closest to the error) first."""
    paths: tuple[str, ...] = ()
    """Source file paths named outside tracebacks: links to source, diffs, plain mentions."""
    modules: tuple[str, ...] = ()
    """Dotted module paths (``pkg.sub.mod``) from imports and text."""
    identifiers: tuple[str, ...] = ()
    """Code-like names (backticked, snake_case, CamelCase, dotted, calls), title first."""
    flags: tuple[str, ...] = ()
    """Command-line flags (``--write-comments``): literal strings worth an exact search."""
    errors: tuple[str, ...] = ()
    """Error and exception names from the report (``KeyError``, ``ValidationError``)."""
    tags: tuple[str, ...] = ()
    """Words that name a component: ``[Tag]`` prefixes, ``Tag:`` title prefixes, URL hosts."""
    prose: str = ""
    """The text with template noise (HTML comments, checklists) and URLs removed."""


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _HTML_COMMENT.sub(" ", text)
    return _CHECKBOX.sub(" ", text)


def _frames(text: str) -> list[Frame]:
    frames = [
        Frame(m.group(1), int(m.group(2)), m.group(3) or "") for m in _PY_FRAME.finditer(text)
    ]
    # Python prints the innermost frame last; other runtimes print it first.
    frames.reverse()
    frames += [Frame(m.group(1), int(m.group(2))) for m in _JS_JAVA_FRAME.finditer(text)]
    return frames


def _paths(text: str, frame_paths: set[str]) -> list[str]:
    found = [m.group(1) for m in _SOURCE_URL.finditer(text)]
    found += [m.group(1) for m in _DIFF_PATH.finditer(text)]
    without_urls = _URL.sub(" ", text)
    found += list(_source_names(without_urls))
    return [p for p in dict.fromkeys(p.replace("\\", "/") for p in found) if p not in frame_paths]


def _source_names(text: str) -> Iterator[str]:
    """Yield each run of path characters up to its last source file name's end."""
    for run in _PATH_RUN.finditer(text):
        ends = [end.end() for end in _PATH_END.finditer(run.group())]
        if ends:
            yield run.group()[: ends[-1]]


def _modules(text: str) -> list[str]:
    found: list[str] = []
    for match in _IMPORT.finditer(text):
        base, names, plain = match.groups()
        if base:
            found.append(base)
            found += [f"{base}.{n.strip(' ()')}" for n in names.split(",") if n.strip(" ()")]
        if plain:
            found += [n.strip().split(" ")[0] for n in plain.split(",") if n.strip()]
    without_urls = _URL.sub(" ", text)
    for match in _DOTTED_MODULE.finditer(without_urls):
        name = match.group(1)
        if not re.search(r"\.(?:py|com|org|io|net|txt|md|html|json|yaml|yml|toml)$", name):
            found.append(name)
    return [m for m in dict.fromkeys(found) if not m.startswith(_NOT_MODULES)]


def _tags(title: str, text: str) -> list[str]:
    tags = [m.group(1) for m in _BRACKET_TAG.finditer(title)]
    prefix = re.match(r"^\s*([A-Za-z][\w .-]{1,30}):\s", title)
    if prefix:
        tags.append(prefix.group(1))
    for match in _URL.finditer(text):
        host = match.group(1).lower().split(":")[0]
        parts = [p for p in host.split(".") if p not in _GENERIC_HOST_PARTS]
        if len(parts) >= 1:
            # the registered name: "tiktok" in www.tiktok.com, "bbc" in bbc.co.uk
            short = len(parts) > 1 and len(parts[-1]) <= 3
            tags.append(parts[-2] if short else parts[-1])
    tags += [m.group(1) for m in _BRACKET_TAG.finditer(text)]
    words: list[str] = []
    for tag in tags:
        words += [w.lower() for w in _WORD.findall(tag)]
    return list(dict.fromkeys(words))


def read_issue(text: str) -> IssueSignals:
    """Split an issue (title on the first line, then the body) into kinds of evidence."""
    cleaned = _clean(text)
    title, _, body = cleaned.strip().partition("\n")
    frames = _frames(cleaned)
    frame_paths = {f.path.replace("\\", "/") for f in frames}
    identifiers = list(dict.fromkeys(exact_terms(title) + _all_terms(body)))[:MAX_IDENTIFIERS]
    errors = [m.group(1) for m in _ERROR_LINE.finditer(cleaned)]
    prose = _URL.sub(" ", cleaned)
    return IssueSignals(
        title=title.strip(),
        frames=tuple(frames),
        paths=tuple(_paths(cleaned, frame_paths)),
        modules=tuple(_modules(cleaned)),
        identifiers=tuple(identifiers),
        flags=tuple(dict.fromkeys(_FLAG.findall(cleaned))),
        errors=tuple(dict.fromkeys(e for e in errors if len(e) > 4)),
        tags=tuple(_tags(title, cleaned)),
        prose=prose,
    )


def _all_terms(text: str) -> list[str]:
    """Return every exact term of ``text``, paragraph by paragraph (the term cap is per call)."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        found += exact_terms(paragraph)
    return found
