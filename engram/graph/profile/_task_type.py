"""Task type from the task text: which of the seven kinds of work the request asks for.

Pure and deterministic. Phrases from ``profile_keywords`` score their type; sentence-level cues
from ``profile_cues`` decide which phrase carries the intent (the main verb, the object of a
generic verb, a prefix, a question, a report of wrong behaviour).
"""

from __future__ import annotations

import re

from engram.graph.profile._cues import (
    BA_CONSTRUCTION,
    CLAUSE_END,
    DESTINATION,
    DESTINATION_WEIGHT,
    DETERMINERS,
    GENERIC_VERB,
    INTENT_WEIGHT,
    MODIFIER_AFTER,
    MODIFIER_BEFORE,
    MODIFIER_WEIGHT,
    OBJECT_FAMILIES,
    OBJECT_STOP,
    OBJECT_WEIGHT,
    OBJECT_WINDOW_EN,
    OBJECT_WINDOW_ZH,
    PREFIX_WEIGHT,
    PREFIXES,
    QUESTION_OPENING,
    QUOTED,
    REQUEST_ANYWHERE,
    REQUEST_QUESTION,
    SYMPTOM_CUES,
    SYMPTOM_NAME,
    SYMPTOM_WEIGHT,
    TOPIC_LEAD_BONUS,
)
from engram.graph.profile._keywords import (
    EXTRA_HIT_WEIGHT,
    LEADING_BONUS,
    POLITE_PREFIX,
    QUESTION_WEIGHT,
    SYMPTOM,
    TYPE_RULES,
    TypeName,
)

DEFAULT_TASK_TYPE: TypeName = "feature"
"""Type of a task that matches no rule: most unlabelled requests ask for a change."""
TIE_ORDER: tuple[TypeName, ...] = ("debug", "test", "docs", "refactor", "explain", "feature", "ops")
"""Which type wins when scores tie: the more specific intent first."""

Hit = tuple[int, int, TypeName, float]
"""(start, end, type, weight) of a phrase that can state the intent."""


def _lead_position(text: str, start: int = 0) -> int:
    """Return where the main verb should sit: after a prefix, politeness and "can we …"."""
    pos = start
    while True:
        moved = pos
        for pattern in (POLITE_PREFIX, REQUEST_QUESTION):
            match = pattern.match(text, moved)
            if match:
                moved = match.end()
        if moved == pos:
            return pos
        pos = moved


def _in_modifier(text: str, match: re.Match[str]) -> bool:
    if SYMPTOM_NAME.fullmatch(match.group(0).strip()):
        return False
    before = text[max(0, match.start() - 40) : match.start()]
    return bool(MODIFIER_BEFORE.search(before) or MODIFIER_AFTER.match(text, match.end()))


def _prefix(text: str) -> tuple[TypeName | None, int]:
    for task_type, pattern in PREFIXES:
        match = pattern.match(text)
        if match:
            return task_type, match.end()
    return None, 0


def _objects(text: str, start: int) -> list[tuple[int, TypeName, str]]:
    """Return (position, type, phrase) for each generic verb whose object is a work product."""
    found = []
    text = QUOTED.sub(lambda m: " " * len(m.group(0)), text)  # quoted text is cited, not asked
    for verb in GENERIC_VERB.finditer(text, start):
        size = OBJECT_WINDOW_EN if verb.group(0)[0].isascii() else OBJECT_WINDOW_ZH
        window = text[verb.end() : verb.end() + size]
        stop = OBJECT_STOP.search(window)
        window = window[: stop.start()] if stop else window
        nouns = [
            (m.start(), t, m.group(0))
            for t, rx in OBJECT_FAMILIES
            for m in [rx.search(window)]
            if m
        ]
        if nouns:
            _, task_type, noun = min(nouns)
            found.append((verb.start(), task_type, f"{verb.group(0)} … {noun}"))
    return found


def _head_of_first(hits: list[Hit], end: int) -> Hit:
    """Return the first phrase before ``end``, as the strongest of its compound.

    Chinese runs phrases together (部署文档 is documentation about deploying): of the phrases
    that follow each other without a gap, the one with the strongest rule states the object.
    """
    ordered = sorted(h for h in hits if h[0] < end)
    head = run_end = ordered[0]
    for hit in ordered[1:]:
        if hit[0] > run_end[1]:
            break
        run_end = hit
        if hit[3] > head[3]:
            head = hit
    return head


def _leading(text: str, hits: list[Hit], lead: int, spots: set[int]) -> dict[TypeName, float]:
    """Return the main-verb bonus per type: full for an intent phrase, less for a topic noun."""
    heads = [h for h in hits if h[0] in spots]
    if BA_CONSTRUCTION.match(text, lead) and hits:
        clause = CLAUSE_END.search(text, lead)
        end = clause.start() if clause else len(text)
        if any(h[0] < end for h in hits):
            heads.append(_head_of_first(hits, end))
    bonus: dict[TypeName, float] = {}
    for _, _, task_type, weight in heads:
        size = LEADING_BONUS if weight >= INTENT_WEIGHT else TOPIC_LEAD_BONUS
        bonus[task_type] = max(bonus.get(task_type, 0.0), size)
    return bonus


def classify_type(text: str) -> tuple[TypeName, str]:
    """Return the task type and the reason.

    Each type scores its best matching weight (halved inside a modifier such as "after the
    release"), plus a little per further distinct hit, plus a bonus for the main verb: the
    phrase that opens the request (after a type prefix, "please", "can we", a determiner, or
    the object of a Chinese 把/给 construction). A generic verb ("add", "写") takes the type
    of its object; a destination such as "in the README" makes it documentation; a
    declarative description of wrong behaviour is a bug report; a question asking for
    information is an explanation.
    """
    prefix_type, start = _prefix(text)
    lead = _lead_position(text, start)
    request = bool(REQUEST_QUESTION.match(text, start) or REQUEST_ANYWHERE.search(text))
    spots = {lead, DETERMINERS.match(text, lead).end()}  # type: ignore[union-attr]
    best: dict[TypeName, float] = {}
    words: dict[TypeName, list[str]] = {}
    hits: list[Hit] = []

    def score(task_type: TypeName, weight: float, word: str, span: tuple[int, int]) -> None:
        best[task_type] = max(best.get(task_type, 0.0), weight)
        words.setdefault(task_type, []).append(word)
        if span[0] >= 0:
            hits.append((span[0], span[1], task_type, weight))

    for task_type, weight, pattern in TYPE_RULES:
        for m in pattern.finditer(text, start):
            if task_type == "explain" and weight <= QUESTION_WEIGHT and m.start() in spots:
                score(task_type, weight, m.group(0).strip(), (-1, -1))  # a question, no verb
                continue
            modifier = m.start() not in spots and _in_modifier(text, m)
            score(
                task_type,
                weight * (MODIFIER_WEIGHT if modifier else 1.0),
                m.group(0).strip(),
                (-1, -1) if modifier else m.span(),
            )
    for pos, task_type, phrase in _objects(text, start):
        score(task_type, OBJECT_WEIGHT, phrase, (pos, pos + 1))
    for m in DESTINATION.finditer(text, start):
        score("docs", DESTINATION_WEIGHT, m.group(0).strip(), (-1, -1))
    leading = _leading(text, hits, lead, spots)
    intent_led = any(bonus >= LEADING_BONUS for bonus in leading.values())
    if not intent_led and not request and SYMPTOM_CUES.search(text):
        score("debug", SYMPTOM_WEIGHT, "describes wrong behaviour", (-1, -1))
    question = text.rstrip().endswith(("?", "？")) or bool(QUESTION_OPENING.match(text, start))
    if question and not request and "debug" not in best:
        score("explain", QUESTION_WEIGHT, "question", (-1, -1))
    if prefix_type:
        best[prefix_type] = max(best.get(prefix_type, 0.0), PREFIX_WEIGHT)
        words.setdefault(prefix_type, []).insert(0, f"prefix {text[:start].strip()}")
        leading[prefix_type] = LEADING_BONUS
    if not best:
        if SYMPTOM.search(text):
            return "debug", "task type debug: describes a behaviour, no other intent found"
        return DEFAULT_TASK_TYPE, f"no type keyword found; defaulting to {DEFAULT_TASK_TYPE}"
    scores = {
        t: best[t] + EXTRA_HIT_WEIGHT * (len(set(words[t])) - 1) + leading.get(t, 0.0) for t in best
    }
    top = max(scores.values())
    chosen = next(t for t in TIE_ORDER if scores.get(t) == top)
    shown = ", ".join(dict.fromkeys(words[chosen]))
    lead_note = " (main verb)" if leading.get(chosen, 0.0) >= LEADING_BONUS else ""
    return chosen, f"task type {chosen}{lead_note}: matched {shown}"
