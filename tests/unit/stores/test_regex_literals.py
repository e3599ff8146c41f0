"""The redaction's prefilter never rules out a text one of its patterns matches.

Every pattern redaction runs is checked against texts generated to hold a match of it
(Hypothesis' ``from_regex``), and the cases a literal reading could get wrong are spelled out.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.stores._redaction import (
    _ENV_LINE,
    _KEY_BLOCK,
    redact_secrets,
    service_patterns,
)
from engram.stores._regex_literals import TextCheck, required_literals
from engram.stores._secrets import _KEYED_VALUE, _PASSWORD, _XML_KEYED, SECRET_PATTERNS


def may_match(pattern: re.Pattern[str], text: str) -> bool:
    return TextCheck(text).may_match(pattern)


PATTERNS = [
    *(pattern for _, pattern in service_patterns()),
    *(pattern for _, pattern in SECRET_PATTERNS),
    _KEY_BLOCK,
    _ENV_LINE,
    _KEYED_VALUE,
    _XML_KEYED,
    _PASSWORD,
]


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:40])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_text_the_pattern_matches_passes_its_prefilter(pattern: re.Pattern[str], data):
    text = data.draw(st.from_regex(pattern, fullmatch=False))
    if pattern.search(text):
        assert may_match(pattern, text), (pattern.pattern, text)


def test_most_patterns_have_a_prefilter():
    filtered = [p for p in PATTERNS if required_literals(p) is not None]
    assert len(filtered) >= 0.9 * len(PATTERNS)


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (r"\bsk-ant-[A-Za-z0-9]{20,}", {"sk-ant-"}),  # \b keeps the characters adjacent
        (
            r"\b(?:sk|rk)_(?:live|test)_\w+|\bwhsec_\w+",
            {"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"},
        ),
        (r"\bgh[pousr]_\w{30}", {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}),  # a small class
        (r"\bg(?:h_\w+|ithub_pat_\w+)", {"gh_", "github_pat_"}),  # a prefix shared
        (r"(?:ab){2,}x", {"ab"}),  # a repeat that must happen holds its literal
        (r"(?:abc)?defg", {"defg"}),  # an optional group holds nothing required
        (r"(?:cloudant|cl|)x", None),  # an empty alternative: nothing is required
        (r"[A-Z]{20}", None),
        (r"a(?=bc)d", None),  # a lookahead's text is not consumed: single letters only
    ],
)
def test_what_is_required(pattern: str, literals: set[str] | None):
    found = required_literals(re.compile(pattern))
    assert (found[0][0] if found else None) == (frozenset(literals) if literals else None)


def test_every_required_set_must_be_found():
    pattern = re.compile(r"\bibm_cloud[\w-]*(?:key|token)\b")
    found = required_literals(pattern)
    assert found == ((frozenset({"ibm_cloud"}), frozenset({"key", "token"})), False)
    assert not may_match(pattern, "ibm_cloud = 1")
    assert not may_match(pattern, "api_key = 1")
    assert may_match(pattern, "ibm_cloud_api_key") and pattern.search("ibm_cloud_api_key")


def test_ignoring_case_follows_the_patterns_own_rules():
    kelvin = "\u212a"  # re matches k to the Kelvin sign when case is ignored
    for pattern in (
        re.compile(r"akey\d", re.I),
        re.compile(r"(?i:akey)\d"),
        re.compile(r"(?i)akey\d"),
    ):
        assert required_literals(pattern) == ((frozenset({"akey"}),), True)
        assert pattern.search(f"A{kelvin}EY1") and may_match(pattern, f"A{kelvin}EY1")
        assert not may_match(pattern, "nothing here 1")
    assert required_literals(re.compile(r"akey\d")) == ((frozenset({"akey"}),), False)
    assert not may_match(re.compile(r"akey\d"), "AKEY1")


def test_redaction_finds_the_same_with_and_without_the_prefilter(monkeypatch):
    import engram.stores._redaction as redaction

    text = (
        "x = 1\nOPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456\n"
        'client_secret = "a8f7c6d5e4b3a2918f7e6d5c4b3a2918"\n'
        "url = 'postgres://admin:s3cretPassw0rd@db.internal:5432/app'\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
    )
    with_filter = redact_secrets(text), redact_secrets(text, code=True)
    monkeypatch.setattr(redaction.TextCheck, "may_match", lambda self, pattern: True)
    assert (redact_secrets(text), redact_secrets(text, code=True)) == with_filter
    assert with_filter[0][1] >= 4


def test_the_characters_folding_to_ascii_are_all_known():
    """The lowercased fast path is sound only if no other character matches an ASCII letter
    when case is ignored: scan every code point as ``re`` itself would."""
    from engram.stores._regex_literals import FOLDS_TO_ASCII

    every = "".join(map(chr, range(0x80, 0x110000)))
    assert set(re.findall("[a-z]", every, re.IGNORECASE)) == FOLDS_TO_ASCII
