"""Pick stable preferences and project facts out of a user's own words (pure, no I/O).

Every candidate is a verbatim substring of the input: sentences are cut on punctuation and
line breaks, only trimmed of surrounding whitespace and list markers, never rewritten.
A sentence qualifies when it states a lasting preference or project fact (English or
Chinese cue phrases), is not a question, does not describe the task at hand, and holds no
secret. Explicit requests to remember something are left to the ``save_memory`` tool, so a
conflict it reports to the user is not bypassed here.
"""

from __future__ import annotations

import re

from engram.stores._secrets import find_secret

AUTO_EXTRACT_LIMIT = 3
MIN_CANDIDATE_CHARS = 6
MAX_CANDIDATE_CHARS = 200

# A "." or "!" followed by a non-space (3.11, main.py) stays inside the sentence.
_SENTENCE = re.compile(r"(?:[^\n.!?;。！？；]|[.!?;](?=[^\s.!?;。！？；]))+[.!?;。！？；]?")
_LEAD = re.compile(r"^[\s\-*•>#\d.)]*")
_TRAILING = ",，、:："

_STABLE_EN = re.compile(
    r"\b(?:i|we)\s+(?:always|never|usually|prefer|like|want|don'?t\s+(?:like|want|use))\b"
    r"|\b(?:always|never)\s+(?:use|run|write|add|put|call|commit|format|reply|answer|respond)\b"
    r"|\b(?:please\s+)?(?:always|never|don'?t\s+ever)\b"
    r"|\bprefer(?:s|red)?\b"
    r"|\b(?:this|the|our)\s+(?:project|repo|repository|codebase|team|service|app)\s+"
    r"(?:uses?|is\s+(?:on|written|built)|runs?|targets?|requires?|deploys?|follows?)\b"
    r"|\bwe\s+(?:use|are\s+using|'re\s+using|deploy|target|follow|run)\b"
    r"|\b(?:our|the)\s+(?:convention|style|standard|policy|rule)\b"
    r"|\bby\s+default\b|\bfrom\s+now\s+on\b",
    re.IGNORECASE,
)
_STABLE_ZH = re.compile(
    r"我(?:喜欢|偏好|习惯|希望|总是|一般|不喜欢)|偏好|习惯用|请(?:始终|总是|一直|always)"
    r"|(?:总是|始终|一律|统一)(?:用|使用|采用)|不要(?:用|使用)|禁止使用"
    r"|(?:本|这个|该|我们的?)项目(?:用|使用|采用|基于|运行在|部署在|要求)"
    r"|我们(?:用|使用|采用|约定|规定)|约定|规范是|默认(?:用|使用)|以后(?:都|请)"
)
_EXPLICIT = re.compile(
    r"\b(?:remember|memori[sz]e|note\s+that|keep\s+in\s+mind)\b|记住|记一下|记得", re.IGNORECASE
)
_TRANSIENT = re.compile(
    r"\b(?:right\s+now|currently|today|tonight|this\s+(?:time|morning|afternoon|task|bug|error)"
    r"|at\s+the\s+moment|for\s+now|line\s+\d+|just\s+now)\b"
    r"|正在|当前|这次|今天|刚才|目前|第\s*\d+\s*行",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"[?？]\s*$|^(?:how|what|why|where|which|who|when|can|could|would|should|is|are|do|does)\b"
    r"|吗\s*[。？?]?$|呢\s*[。？?]?$|^(?:怎么|为什么|如何|是否)",
    re.IGNORECASE,
)


def extract_candidates(user_text: str, *, limit: int = AUTO_EXTRACT_LIMIT) -> list[str]:
    """Return up to ``limit`` stable facts found in ``user_text``, in order, each verbatim.

    Args:
        user_text: The user's own message for the finished turn (never tool output).
        limit: Most candidates to return.
    """
    found: list[str] = []
    for match in _SENTENCE.finditer(user_text):
        candidate = _trim(match.group())
        if candidate and candidate not in found and _qualifies(candidate):
            found.append(candidate)
        if len(found) >= limit:
            break
    return found


def _trim(sentence: str) -> str:
    """Strip whitespace and list markers from the edges (the result stays a substring).

    The end is scanned back by hand: a pattern anchored at the end is tried from every
    position, quadratic in a long run of spaces.
    """
    end = len(sentence)
    while end and (sentence[end - 1].isspace() or sentence[end - 1] in _TRAILING):
        end -= 1
    return _LEAD.sub("", sentence[:end]).strip()


def _qualifies(sentence: str) -> bool:
    if not MIN_CANDIDATE_CHARS <= len(sentence) <= MAX_CANDIDATE_CHARS:
        return False
    if _QUESTION.search(sentence) or _TRANSIENT.search(sentence) or _EXPLICIT.search(sentence):
        return False
    if not (_STABLE_EN.search(sentence) or _STABLE_ZH.search(sentence)):
        return False
    return find_secret(sentence) is None
