"""Auto-extraction: verbatim, English and Chinese, paused after external content, no secrets."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from engram.stores.memory import FactStore, auto_extract
from engram.stores.memory._extraction import _trim, extract_candidates

NOW = datetime(2026, 3, 1, tzinfo=UTC)
KEY = "/srv/app"

EN = (
    "Please fix the failing test in main.py line 42. We use Python 3.11 in this repo. "
    "I prefer tabs over spaces! How do I run the tests? Right now I always run them by hand."
)
ZH = "帮我修一下这个函数。我喜欢用中文回复。本项目使用 Java 17。这次先跳过测试。项目用什么数据库？"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (EN, ["We use Python 3.11 in this repo.", "I prefer tabs over spaces!"]),
        (ZH, ["我喜欢用中文回复。", "本项目使用 Java 17。"]),
        (
            "- Always run ruff before committing\n- rename foo to bar",
            ["Always run ruff before committing"],
        ),
        ("Rename the variable x to count.", []),
        ("What do we use for CI?", []),
        ("以后都请用 pnpm 而不是 npm", ["以后都请用 pnpm 而不是 npm"]),
        # Explicit "remember" requests belong to the save_memory tool and its conflict check.
        ("Remember that we moved to Java 21.", []),
        ("记住我们的项目使用 Java 21。", []),
    ],
)
def test_candidates(text, expected):
    assert extract_candidates(text) == expected


def test_candidates_are_verbatim_substrings():
    for text in (EN, ZH):
        for candidate in extract_candidates(text):
            assert candidate in text


def test_at_most_limit():
    text = " ".join(f"We always use tool{i} for job{i}." for i in range(6))
    assert len(extract_candidates(text)) == 3
    assert len(extract_candidates(text, limit=1)) == 1


def test_secrets_never_extracted():
    text = "We always use the key sk-abcdefghijklmnopqrstuvwxyz012345. 我们用的密码是 hunter22。"
    assert extract_candidates(text) == []


def test_auto_extract_saves_unverified_project_facts():
    store = InMemoryStore()
    saved = auto_extract(
        EN,
        store=store,
        project_key=KEY,
        external_content_seen=False,
        provenance={"thread": "t1"},
        now=NOW,
    )
    assert [f.text for f in saved] == [
        "We use Python 3.11 in this repo.",
        "I prefer tabs over spaces!",
    ]
    assert all(
        f.scope == "project" and f.source == "auto" and f.status == "unverified" for f in saved
    )
    assert all(f.provenance == {"thread": "t1"} for f in saved)


def test_auto_extract_pauses_after_external_content():
    store = InMemoryStore()
    assert (
        auto_extract(
            EN, store=store, project_key=KEY, external_content_seen=True, provenance={}, now=NOW
        )
        == []
    )
    assert FactStore(store).facts(project_key=KEY) == []


def test_auto_extract_skips_duplicates_and_conflicts():
    store = InMemoryStore()
    FactStore(store).add(
        "We use Python 3.9 in this repo.", scope="project", project_key=KEY, source="user", now=NOW
    )
    saved = auto_extract(
        EN, store=store, project_key=KEY, external_content_seen=False, provenance={}, now=NOW
    )
    assert [f.text for f in saved] == ["I prefer tabs over spaces!"]
    again = auto_extract(
        EN, store=store, project_key=KEY, external_content_seen=False, provenance={}, now=NOW
    )
    assert again == []
    assert len(FactStore(store).facts(project_key=KEY)) == 2


def test_auto_extract_skips_what_a_global_fact_already_says():
    store = InMemoryStore()
    FactStore(store).add(
        "I prefer tabs over spaces", scope="global", project_key=KEY, source="user", now=NOW
    )
    saved = auto_extract(
        EN, store=store, project_key=KEY, external_content_seen=False, provenance={}, now=NOW
    )
    assert [f.text for f in saved] == ["We use Python 3.11 in this repo."]


OLD_EDGE = re.compile(r"^[\s\-*•>#\d.)]*|[\s,，、:：]*$")
"""The one-pattern trim, which was quadratic in a long run of spaces at a sentence's end."""


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t-*•>#1.),，、:：ab\u3000", max_size=12))
def test_a_sentence_is_trimmed_as_the_single_pattern_trimmed_it(sentence):
    assert _trim(sentence) == OLD_EDGE.sub("", sentence).strip()


def test_a_sentence_with_a_long_run_of_spaces_is_trimmed_at_once():
    started = time.monotonic()  # a hang guard: 100,000 spaces inside took about 40 s
    assert _trim("- use" + " " * 100_000 + "tox ,") == "use" + " " * 100_000 + "tox"
    assert time.monotonic() - started < 30
