"""Gitignore rules matched in time linear in the path, whatever the patterns say.

A repository's ``.gitignore`` is untrusted input. Translated to a backtracking regex (as the
``pathspec`` package does), a pattern such as ``*a*a*a*a*a*a*a*a*b`` takes minutes to fail on a
sixty-character file name, and every walk of the project (the index, ``glob_files``, the
search fallback) would hang on it. Here a pattern is split at ``/`` into segments and matched
like git's own wildmatch: within a path segment, ``*``, ``?`` and ``[...]`` by the greedy
two-pointer method (a failed match costs at most the segment's length times the pattern's);
across segments, ``**`` the same way over whole segments. Most rules are simple enough for a
regex that cannot backtrack far (``REGEX_MAX_STARS``); those are joined into alternations
(``GROUP_SIZE``), so a path costs a few regex calls however many rules there are, and one file
gives at most ``MAX_RULES`` rules: the many are as harmless as the pathological. The commonest
rules, a plain name or ``*.ext`` at any depth, are not matched at all but looked up, segment
by segment (``IgnoreRule.plain``).

Semantics (``gitignore(5)``): blank lines and ``#`` comments are skipped, trailing spaces are
dropped unless escaped, ``!`` re-includes, a trailing ``/`` matches directories only, a ``/``
anywhere else anchors the pattern to its file's folder (otherwise it matches at any depth), a
leading ``**/`` matches in every folder, a trailing ``/**`` everything inside, ``/**/`` zero
or more folders; the last rule that matches decides. A pattern matching a folder matches
everything inside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

GLOBSTAR = "**"
_STAR = object()
"""A ``*`` inside a segment pattern."""
REGEX_MAX_STARS = 2
"""A rule whose segments have at most this many ``*`` each, with at most one ``**`` (counting
the any-depth start of an unanchored pattern), is matched by one compiled regex, as fast as
``pathspec``: each segment is an atomic group that must end at a ``/``, so a failed match costs
at most the number of folders times a segment's length squared. Any other rule is matched by
the greedy method."""

MAX_PATTERN_CHARS = 4096
"""A longer pattern line is skipped: no path is that long (``PATH_MAX``), and the greedy method
costs the pattern's length times the path's."""

MAX_RULES = 10_000
"""Rules read from one ignore file; later lines are not applied. A repository's own
``.gitignore`` has tens to a few hundred; a hundred thousand made every walk take minutes."""
MAX_COSTLY_RULES = 256
"""Costly rules read from one ignore file, later ones not applied: those matched by the greedy
method (a Python loop per path) and those with two ``*`` in one segment (their regex costs a
segment's length squared). Real ignore files have a handful; ten thousand ``*a*bN`` rules took
0.3 s per long file name."""
MAX_IGNORE_FILE_BYTES = 1 << 20
"""Bytes read from one ignore file (a mebibyte is tens of thousands of rules)."""
TRUNCATED = (
    f"ignore file too long ({MAX_RULES:,} rules, {MAX_COSTLY_RULES} with many wildcards, "
    f"{MAX_IGNORE_FILE_BYTES >> 20} MiB): the rest not applied"
)
"""Why the walk reports an ignore file it read only in part."""
GROUP_SIZE = 256
"""Regex rules joined into one alternation: a path is tried against each block in C, not
against each rule in Python."""
_NONE = 1 << 62
"""No rule of a block matches (a place after every rule)."""

NAME_RULE = "name"
SUFFIX_RULE = "suffix"

SegmentMatch = Callable[[str], bool]


@dataclass(frozen=True)
class IgnoreRule:
    """One pattern line: its segment matchers (``GLOBSTAR`` for ``**``) and how it applies."""

    pattern: str
    segments: tuple[SegmentMatch | str, ...]
    include: bool
    """True for an ignoring rule, False for a ``!`` rule that re-includes."""
    dir_only: bool
    trailing_globstar: bool
    """The pattern ended in ``/**``: it matches what is inside, not the folder itself."""
    costly: bool = False
    """Matched by the greedy method, or with two ``*`` in one segment (MAX_COSTLY_RULES)."""
    regex: tuple[str, str] | None = None
    """The same rule as two regexes over the path (sources, each starting with ``^``): the
    rule alone or as a folder with more after it, and only as such a folder; when it has at
    most ``REGEX_MAX_STARS`` variable-length parts."""
    plain: tuple[str, str] | None = None
    """An unanchored one-segment rule looked up, not matched: ``(NAME_RULE, name)`` for a
    plain name (``build/``, ``.DS_Store``), ``(SUFFIX_RULE, suffix)`` for ``*`` then a plain
    ending that starts with a dot (``*.pyc``). Most rules of a real ``.gitignore`` are one of
    the two; a path tries them by a dictionary lookup per segment (``_Block``)."""

    def regex_for(self, is_dir: bool) -> str:
        """Return the regex source that decides this rule for a file or a folder path."""
        assert self.regex is not None
        alone_too = (is_dir or not self.dir_only) and not self.trailing_globstar
        either, within = self.regex
        return either if alone_too else within

    def matches(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Tell whether the rule matches the path ``parts`` or a folder on its way.

        By the greedy method; a rule with ``regex`` is matched in its block (``_Block``).
        """
        alone_too = (is_dir or not self.dir_only) and not self.trailing_globstar
        segments = self.segments
        if alone_too and _greedy(segments, parts, _segment_matches, GLOBSTAR):
            return True
        # a folder on the way: the pattern, then one segment or more
        return _greedy((*segments, _any_segment, GLOBSTAR), parts, _segment_matches, GLOBSTAR)


def _any_segment(name: str) -> bool:
    return True


def _segment_matches(token: SegmentMatch | str, name: str) -> bool:
    return token(name) if callable(token) else token == name


def _greedy(
    tokens: Sequence[object], text: Sequence[str], matches: Callable[..., bool], star: object
) -> bool:
    """Wildcard matching by the greedy two-pointer method: ``star`` matches any run of items.

    Each star is first tried empty and grown one item at a time only when what follows fails,
    going back to the last star only: at most ``len(tokens) * len(text)`` steps.
    """
    t = i = 0
    star_t, star_i = -1, 0
    while i < len(text):
        if t < len(tokens) and tokens[t] is star:
            star_t, star_i = t, i
            t += 1
        elif t < len(tokens) and matches(tokens[t], text[i]):
            t += 1
            i += 1
        elif star_t >= 0:
            star_i += 1
            t, i = star_t + 1, star_i
        else:
            return False
    while t < len(tokens) and tokens[t] is star:
        t += 1
    return t == len(tokens)


def _char_matches(token: object, char: str) -> bool:
    if isinstance(token, str):
        return token == char
    return bool(token.fullmatch(char))  # type: ignore[attr-defined]


def _segment(text: str) -> tuple[SegmentMatch | str, str, int]:
    """Compile one segment pattern: a plain name, or a matcher for ``*``, ``?`` and ``[...]``.

    Returns the matcher, the segment as a regex (``*`` as ``[^/]*``) and its count of ``*``.
    """
    tokens: list[object] = []
    regex: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            tokens.append(text[i + 1])
            regex.append(re.escape(text[i + 1]))
            i += 2
            continue
        if char == "*":
            if not tokens or tokens[-1] is not _STAR:  # "**" inside a segment is a "*"
                tokens.append(_STAR)
                regex.append("[^/]*")
            i += 1
            continue
        if char == "?":
            tokens.append(re.compile("[^/]"))
            regex.append("[^/]")
            i += 1
            continue
        if char == "[":
            klass, after = _char_class(text, i)
            if klass is not None:
                tokens.append(re.compile(klass))
                regex.append(klass)
                i = after
                continue
        tokens.append(char)
        regex.append(re.escape(char))
        i += 1
    stars = sum(t is _STAR for t in tokens)
    if all(isinstance(t, str) for t in tokens):
        return "".join(tokens), "".join(regex), 0  # type: ignore[arg-type]
    frozen = tuple(tokens)
    return (lambda name: _greedy(frozen, name, _char_matches, _STAR)), "".join(regex), stars


def _char_class(text: str, start: int) -> tuple[str | None, int]:
    """Translate the ``[...]`` at ``start`` to a regex class; (None, start) when it is not one."""
    i = start + 1
    negate = i < len(text) and text[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(text):
        char = text[i]
        if char == "]" and not first:
            body = "".join(items)
            return (f"[{'^' if negate else ''}{body}]", i + 1)
        first = False
        if char == "\\" and i + 1 < len(text):
            char = text[i + 1]
            i += 1
        if i + 2 < len(text) and text[i + 1] == "-" and text[i + 2] != "]":
            end = text[i + 2]
            if end == "\\" and i + 3 < len(text):
                end = text[i + 3]
                i += 1
            if ord(end) >= ord(char):
                items.append(f"{re.escape(char)}-{re.escape(end)}")
            i += 3
            continue
        items.append(re.escape(char))
        i += 1
    return None, start


def parse_rule(line: str) -> IgnoreRule | None:
    """Parse one ``.gitignore`` line; None for a blank line, a comment or an empty pattern."""
    text = line.rstrip("\n").rstrip("\r")
    if len(text) > MAX_PATTERN_CHARS:
        return None
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text or text.startswith("#"):
        return None
    include = True
    if text.startswith("!"):
        include, text = False, text[1:]
    elif text.startswith(("\\!", "\\#")):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    pieces = [p for p in text.lstrip("/").split("/") if p]
    if not pieces:
        return None
    trailing = len(pieces) > 1 and pieces[-1] == GLOBSTAR
    if trailing:
        pieces = pieces[:-1]
    segments: list[SegmentMatch | str] = [] if anchored else [GLOBSTAR]
    texts: list[str] = [] if anchored else [GLOBSTAR]
    most_stars = 0
    for piece in pieces:
        if piece == GLOBSTAR:
            if not segments or segments[-1] != GLOBSTAR:
                segments.append(GLOBSTAR)
                texts.append(GLOBSTAR)
        else:
            matcher, text_regex, count = _segment(piece)
            segments.append(matcher)
            # atomic up to the segment's end: the rest depends only on where it ends
            texts.append(f"(?>{text_regex}(?=/|$))" if count else text_regex)
            most_stars = max(most_stars, count)
    safe = most_stars <= REGEX_MAX_STARS and texts.count(GLOBSTAR) <= 1
    regex = _rule_regex(texts) if safe else None
    costly = regex is None or most_stars >= REGEX_MAX_STARS
    plain = None if anchored or trailing or len(pieces) != 1 else _plain(pieces[0])
    return IgnoreRule(
        line, tuple(segments), include, dir_only and not trailing, trailing, costly, regex, plain
    )


def _plain(piece: str) -> tuple[str, str] | None:
    """Return how a one-segment pattern is looked up (``IgnoreRule.plain``), None if matched."""
    if piece == GLOBSTAR:
        return None
    matcher, _, _ = _segment(piece)
    if isinstance(matcher, str):
        return NAME_RULE, matcher
    if piece.startswith("*") and not piece.startswith("**"):
        ending, _, _ = _segment(piece[1:])
        if isinstance(ending, str) and ending.startswith("."):
            return SUFFIX_RULE, ending
    return None


def _rule_regex(texts: Sequence[str]) -> tuple[str, str]:
    """Join segment regexes (``**`` as any run of whole segments).

    Returns the rule alone or as a folder with more after it, and only as such a folder.
    """
    out = ["^"]
    for number, text in enumerate(texts):
        if text == GLOBSTAR:
            # zero or more whole segments, each with its "/" (a last "**" is any segments)
            out.append("(?:[^/]+/)*" if number + 1 < len(texts) else "(?:[^/]+/)*[^/]+")
            continue
        out.append(text)
        if number + 1 < len(texts):
            out.append("/")
    core = "".join(out)
    return core + "(?:/.|$)", core + "/."


@dataclass(frozen=True)
class _Block:
    """Consecutive rules, the last one first: one greedy rule, or joined regex and plain rules.

    A rule's place in ``rules`` is its priority (0 is the last rule of the block, which wins).
    Up to GROUP_SIZE regex rules become one alternation, each alternative a group: the first
    alternative that matches is the last of these rules that matches. Plain rules (names and
    ``*.ext``) sit in dictionaries from the name or the ending to the first place of a rule
    that applies to any path and of one that applies to folders only; a path looks up each of
    its segments (and each ending of it from a dot).
    """

    rules: tuple[IgnoreRule, ...]
    for_files: re.Pattern[str] | None = None
    """The joined regex as the rules apply to a file's path (None: no regex rule)."""
    for_folders: re.Pattern[str] | None = None
    places: tuple[int, ...] = ()
    """The place in ``rules`` of each alternative of the joined regex."""
    names: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    suffixes: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def joined(cls, rules: Sequence[IgnoreRule]) -> _Block:
        regex_rules = [(place, r) for place, r in enumerate(rules) if r.plain is None]

        def regex(is_dir: bool) -> re.Pattern[str] | None:
            if not regex_rules:
                return None
            alternatives = "|".join(f"({r.regex_for(is_dir)[1:]})" for _, r in regex_rules)
            return re.compile(f"^(?:{alternatives})", re.DOTALL)

        tables: dict[str, dict[str, tuple[int, int]]] = {NAME_RULE: {}, SUFFIX_RULE: {}}
        for place, rule in reversed(list(enumerate(rules))):
            if rule.plain is None:
                continue
            kind, text = rule.plain
            anywhere, folders = tables[kind].get(text, (_NONE, _NONE))
            if rule.dir_only:
                folders = place
            else:
                anywhere = place
            tables[kind][text] = (anywhere, folders)
        return cls(
            tuple(rules),
            regex(False),
            regex(True),
            tuple(place for place, _ in regex_rules),
            tables[NAME_RULE],
            tables[SUFFIX_RULE],
        )

    def decision(self, path: str, parts: Sequence[str], is_dir: bool) -> bool | None:
        """Return the sign of the last of these rules that matches, None when none does."""
        if len(self.rules) == 1 and self.rules[0].regex is None:
            (rule,) = self.rules
            return rule.include if rule.matches(parts, is_dir) else None
        best = _NONE
        regex = self.for_folders if is_dir else self.for_files
        if regex is not None:
            found = regex.match(path)
            if found and found.lastindex:
                best = self.places[found.lastindex - 1]
        if self.names or self.suffixes:
            best = min(best, self._plain_place(parts, is_dir))
        return None if best == _NONE else self.rules[best].include

    def _plain_place(self, parts: Sequence[str], is_dir: bool) -> int:
        """Return the first place of a plain rule matching a segment of ``parts`` (or _NONE)."""
        best = _NONE
        last = len(parts) - 1
        for number, part in enumerate(parts):
            folder = is_dir or number < last  # a folder-only rule matches folders on the way
            hit = self.names.get(part)
            if hit is not None:
                best = min(best, hit[0], hit[1] if folder else _NONE)
            if self.suffixes:
                dot = part.find(".")
                while dot >= 0:
                    hit = self.suffixes.get(part[dot:])
                    if hit is not None:
                        best = min(best, hit[0], hit[1] if folder else _NONE)
                    dot = part.find(".", dot + 1)
        return best


class IgnoreRules:
    """The rules of one ignore file, matched against paths relative to its folder.

    The last rule that matches decides, so the rules are tried from the last one back, in
    blocks (``_Block``): the first block with a match gives the answer.
    """

    def __init__(self, rules: Iterable[IgnoreRule], *, truncated: bool = False) -> None:
        self.rules = tuple(rules)
        self.truncated = truncated
        """More than MAX_RULES rules (or MAX_COSTLY_RULES costly ones) were given: the rest
        are not applied."""
        blocks: list[_Block] = []
        pending: list[IgnoreRule] = []
        joined = 0
        for rule in reversed(self.rules):
            if rule.regex is not None:
                pending.append(rule)
                joined += rule.plain is None
                if joined == GROUP_SIZE:
                    blocks.append(_Block.joined(pending))
                    pending, joined = [], 0
                continue
            if pending:
                blocks.append(_Block.joined(pending))
                pending, joined = [], 0
            blocks.append(_Block((rule,)))
        if pending:
            blocks.append(_Block.joined(pending))
        self._blocks = tuple(blocks)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> IgnoreRules:
        """Parse ignore-file lines (unparseable and blank ones are skipped; see MAX_RULES)."""
        rules: list[IgnoreRule] = []
        costly = 0
        for line in lines:
            rule = parse_rule(line)
            if rule is None:
                continue
            costly += rule.costly
            if len(rules) == MAX_RULES or costly > MAX_COSTLY_RULES:
                return cls(rules, truncated=True)
            rules.append(rule)
        return cls(rules)

    def match_file(self, path: str) -> bool:
        """Tell whether ``path`` is ignored; a trailing ``/`` marks a folder."""
        is_dir = path.endswith("/")
        parts = [p for p in path.split("/") if p]
        if not parts:
            return False
        joined = "/".join(parts)
        for block in self._blocks:
            decision = block.decision(joined, parts, is_dir)
            if decision is not None:
                return decision
        return False
