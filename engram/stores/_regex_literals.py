r"""Literals a regular expression cannot match without: a sound prefilter for many patterns.

Redaction runs about a hundred patterns over every text it checks, and most start with ``\b``
or a character class, so the regex engine tries each of them at every position of the text
(about 40 ms per pattern for 2 MB). Nearly all of them hold a literal that any match must
contain (``sk-ant-``, ``atlasv1``, one of ``cloudant``/``cl``/``clou``); looking for those
first is a fast substring search, and a pattern whose literals are all absent cannot match.

``required_literals`` reads the pattern's parse tree (``re._parser``, the parser ``re`` itself
uses) and returns the sets of strings a match must hold one of each (a small character class
or a shared prefix read as alternatives: ``gh[pousr]_`` gives ``ghp_``, ``gho_``, …), or None
when it finds none; ``TextCheck.may_match`` applies them. A pattern that ignores case anywhere
is checked case-insensitively with the same case rules as the pattern itself (``re`` matches
``k`` to the Kelvin sign), so the prefilter never rules out a text the pattern would match
(``tests/unit/stores/test_regex_literals.py`` checks every redaction pattern on texts made to
match it). ``bench/context/pack_redaction.py`` measures it: an 8K pack's redaction 51 -> 19 ms
(median over the 149 locbench-dev packs), 0.67 -> 1.46 MB/s on 2 MB of source.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIN_LITERAL_CHARS = 2
"""Shorter literals filter too little to be worth a search."""


def _parse(pattern: re.Pattern[str]) -> Any:
    try:
        from re import _parser  # type: ignore[attr-defined]

        return _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - another Python's parser: no prefilter, every pattern runs
        return None


def required_literals(
    pattern: re.Pattern[str],
) -> tuple[tuple[frozenset[str], ...], bool] | None:
    """Return sets of literals, and whether case is ignored: every match holds one of each set.

    The sets come most selective first (longest shortest string, then fewest), at most
    MAX_SETS of them. None when no set is found (the pattern then always runs).
    """
    parsed = _parse(pattern)
    if parsed is None:
        return None
    from re import _constants  # type: ignore[attr-defined]

    ignore_case = bool(parsed.state.flags & re.IGNORECASE) or _local_ignore_case(
        parsed.data, _constants
    )
    found = _sequence(list(parsed.data), _constants)
    return (found, ignore_case) if found else None


def _local_ignore_case(items: Sequence[Any], c: Any) -> bool:
    """Whether any group of ``items`` turns ignoring case on (``(?i:…)``)."""
    for op, arg in items:
        if op is c.SUBPATTERN:
            if arg[1] & re.IGNORECASE or _local_ignore_case(list(arg[3].data), c):
                return True
        elif op is c.BRANCH:
            if any(_local_ignore_case(list(b.data), c) for b in arg[1]):
                return True
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            if _local_ignore_case(list(arg[2].data), c):
                return True
        elif op is c.ATOMIC_GROUP and _local_ignore_case(list(arg.data), c):
            return True
    return False


MAX_ALTERNATIVES = 64
"""Most strings a set of alternatives grows to (``gh[pousr]_`` is five) before it is cut."""
MAX_SETS = 4
"""Most literal sets a pattern is prefiltered by (each one must be found)."""
MAX_CLASS_CHARS = 8
"""Largest character class read as alternatives (``[pousr]``); a larger one ends a literal."""


def _sequence(items: Sequence[Any], c: Any) -> tuple[frozenset[str], ...]:
    """Return the sets of literals a match of this sequence must hold, most selective first."""
    candidates, runs = _walk(items, frozenset({""}), c)
    _close(runs, candidates)
    return tuple(_ordered(candidates)[:MAX_SETS])


def _ordered(candidates: list[frozenset[str]]) -> list[frozenset[str]]:
    unique = list(dict.fromkeys(candidates))
    return sorted(unique, key=lambda found: (-min(map(len, found)), len(found)))


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    return next(iter(_ordered(candidates)), None)


def _close(runs: frozenset[str], candidates: list[frozenset[str]]) -> None:
    if min(map(len, runs)) >= MIN_LITERAL_CHARS:
        candidates.append(runs)


def _class_chars(arg: Any, c: Any) -> list[str] | None:
    """Return the characters of a small character class (None for a large or negated one)."""
    chars: list[str] = []
    for op, value in arg:
        if op is c.LITERAL:
            chars.append(chr(value))
        elif op is c.RANGE and value[1] - value[0] < MAX_CLASS_CHARS:
            chars.extend(map(chr, range(value[0], value[1] + 1)))
        else:
            return None
    return chars if len(chars) <= MAX_CLASS_CHARS else None


def _walk(
    items: Sequence[Any], runs: frozenset[str], c: Any
) -> tuple[list[frozenset[str]], frozenset[str]]:
    """Read a sequence after text that ends with one of ``runs``.

    Returns the literal sets a match must hold (each: one of its strings), and the strings
    one of which the text matched so far ends with (``{""}`` when nothing is known).
    """
    candidates: list[frozenset[str]] = []
    empty = frozenset({""})

    def extend(chars: Sequence[str]) -> frozenset[str]:
        if len(runs) * len(chars) > MAX_ALTERNATIVES:
            _close(runs, candidates)
            return frozenset(chars)
        return frozenset(r + ch for r in runs for ch in chars)

    for op, arg in items:
        if op is c.LITERAL:
            runs = extend([chr(arg)])
        elif op is c.AT:  # zero-width (``\b``, ``^``): the characters around it stay adjacent
            continue
        elif op is c.IN and (chars := _class_chars(arg, c)) is not None:
            runs = extend(chars)
        elif op is c.SUBPATTERN or op is c.ATOMIC_GROUP:
            body = arg[3] if op is c.SUBPATTERN else arg
            found, runs = _walk(list(body.data), runs, c)
            candidates += found
        elif op is c.BRANCH:
            ends: set[str] = set()
            required: list[frozenset[str]] = []
            for branch in arg[1]:
                found, tail = _walk(list(branch.data), runs, c)
                _close(tail, found)
                ends |= tail
                if (best := _best(found)) is not None:
                    required.append(best)
            if len(required) == len(arg[1]):  # every way through holds one of its strings
                candidates.append(frozenset().union(*required))
            runs = frozenset(ends) if len(ends) <= MAX_ALTERNATIVES else empty
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            found, tail = _walk(list(arg[2].data), runs, c)  # its first time through
            candidates += found
            if arg[1] == 1:
                runs = tail
            else:
                _close(tail, candidates)
                runs = empty
        else:
            _close(runs, candidates)
            runs = empty
    return candidates, runs


FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")
"""The characters ``re`` matches to an ASCII letter when case is ignored (İ, ı, ſ, the Kelvin
sign): a text holding none of them can be searched for ASCII literals lowercased."""


@dataclass(frozen=True)
class _Check:
    sets: tuple[frozenset[str], ...]
    folded: tuple[re.Pattern[str], ...] | None
    """Case-insensitive searches for each set (None: case counts)."""
    lowered: tuple[frozenset[str], ...] | None
    """The sets lowercased, when all are ASCII (plain searches in the lowercased text)."""


@functools.lru_cache(maxsize=1024)
def _prefilter(pattern: re.Pattern[str]) -> _Check | None:
    found = required_literals(pattern)
    if found is None:
        return None
    sets, ignore_case = found
    if not ignore_case:
        return _Check(sets, None, None)
    folded = tuple(
        re.compile("|".join(re.escape(s) for s in sorted(one, key=len, reverse=True)), re.I)
        for one in sets
    )
    ascii_only = all(s.isascii() for one in sets for s in one)
    lowered = tuple(frozenset(s.lower() for s in one) for one in sets) if ascii_only else None
    return _Check(sets, folded, lowered)


class TextCheck:
    """One text's prefilter for many patterns (it lowercases the text once, if needed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lowered: str | None = None

    def lowered(self) -> str | None:
        """Return the text lowercased; None when one of its characters is in FOLDS_TO_ASCII."""
        if self._lowered is None:
            folds = not self.text.isascii() and not FOLDS_TO_ASCII.isdisjoint(self.text)
            self._lowered = "" if folds else self.text.lower()
        return self._lowered if self._lowered or not self.text else None

    def may_match(self, pattern: re.Pattern[str]) -> bool:
        """Return False only when ``pattern`` cannot match anywhere in the text."""
        check = _prefilter(pattern)
        if check is None:
            return True
        if check.folded is None:
            return all(any(s in self.text for s in one) for one in check.sets)
        lowered = self.lowered() if check.lowered is not None else None
        if lowered is not None and check.lowered is not None:
            return all(any(s in lowered for s in one) for one in check.lowered)
        return all(search.search(self.text) is not None for search in check.folded)
