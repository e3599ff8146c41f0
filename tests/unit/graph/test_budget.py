from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engram.graph import count_text, estimate_messages, reconcile, thresholds
from engram.graph._budget import Thresholds
from engram.graph._tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
    TOOL_CALL_OVERHEAD_TOKENS,
    remembering,
)


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize(
    ("window", "trigger", "clear", "memory_cap"),
    [
        (32_000, 20_000, 12_000, 500),
        (128_000, 95_000, 57_000, 640),
        (200_000, 167_000, 100_000, 1_000),
        (256_000, 223_000, 100_000, 1_280),
        (1_000_000, 967_000, 100_000, 5_000),
    ],
)
def test_thresholds_pinned(window, trigger, clear, memory_cap):
    assert thresholds(window) == Thresholds(window, trigger, clear, memory_cap)


def test_thresholds_tiny_window_stays_inside_window():
    t = thresholds(1024)
    assert 0 < t.clear < t.trigger <= t.window


def test_thresholds_reject_non_positive():
    with pytest.raises(ValueError):
        thresholds(0)


def test_count_text_scripts():
    assert count_text("") == 0
    assert count_text("abcd" * 10) == 10
    assert count_text("上下文压缩上下文压缩") == 11  # 1.1 per CJK char
    # mixed: 8 ascii chars -> 2, 10 CJK -> 11
    assert count_text("abcdefgh上下文压缩上下文压缩") == 13
    # other scripts: ~1.7 UTF-8 bytes per token (12 bytes -> 8)
    assert count_text("привет") == 8
    # runs of digits are dear: 4 chars -> 1, plus 2 digit runs x 2.0
    assert count_text("1 22") == 5
    # runs of spaces are cheap: 8 spaces = 4 pairs of half a char each -> 2 chars
    assert count_text(" " * 8 + "abcdef") == 2


def test_estimate_messages_with_word_counter_is_exact():
    msgs = [
        SystemMessage("you are helpful"),
        HumanMessage("fix the bug"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "c1"}]),
        ToolMessage("one two three", tool_call_id="c1"),
    ]
    got = estimate_messages(msgs, system_prompt="stable prompt", count=words)
    expected = (
        REQUEST_OVERHEAD_TOKENS
        + MESSAGE_OVERHEAD_TOKENS
        + 2  # system_prompt
        + MESSAGE_OVERHEAD_TOKENS
        + 3
        + MESSAGE_OVERHEAD_TOKENS
        + 3
        + MESSAGE_OVERHEAD_TOKENS
        + 0
        + TOOL_CALL_OVERHEAD_TOKENS
        + 1
        + 2  # '{"path": "a.py"}'
        + MESSAGE_OVERHEAD_TOKENS
        + 3
    )
    assert got == expected


def test_estimate_counts_tool_schemas_and_blocks():
    schema = {"name": "grep_code", "description": "search code", "parameters": {}}
    base = estimate_messages([HumanMessage("hi")])
    assert estimate_messages([HumanMessage("hi")], tool_schemas=[schema]) > base
    blocks = HumanMessage(content=[{"type": "text", "text": "hello world"}])
    assert estimate_messages([blocks], count=words) == (
        REQUEST_OVERHEAD_TOKENS + MESSAGE_OVERHEAD_TOKENS + 2
    )


def test_reconcile():
    assert reconcile(1000, None, None) == 1000
    assert reconcile(1000, 0, 500) == 1000
    assert reconcile(1000, 1200, 1000) == 1200
    assert reconcile(2000, 600, 500) == 2400
    # absurd ratios are clamped
    assert reconcile(100, 1_000_000, 10) == 400


# --- planning --------------------------------------------------------------------------------
from engram.graph import decide  # noqa: E402
from engram.graph._budget import (  # noqa: E402
    clear_batch_minimum,
    drop_is_enough,
    plan_chunks,
    plan_clear,
    plan_cut,
)


def test_decide():
    t = thresholds(128_000)
    assert decide(t.clear - 1, t) == "ok"
    assert decide(t.clear, t) == "clear"
    assert decide(t.trigger, t) == "summarize"


def test_clear_batch_minimum():
    assert clear_batch_minimum(thresholds(128_000)) == 28_500


def test_plan_clear_keeps_recent_and_skips_cleared():
    savings = [(2, 100), (4, None), (6, 50), (8, 500), (9, 10), (11, 10)]
    assert plan_clear(savings, min_saving=1) == [2, 6]
    assert plan_clear(savings, min_saving=1, keep_recent=1) == [2, 6, 8, 9]
    # too small a batch is not worth the cache miss
    assert plan_clear(savings, min_saving=151) == []
    assert plan_clear(savings[:3], min_saving=1) == []


def test_plan_cut_on_user_boundaries():
    roles = [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert plan_cut(roles, 3) == 4
    assert plan_cut(roles, 1) == 8
    assert plan_cut(roles, 4) is None  # the span would hold only the system message
    assert plan_cut(roles, 5) is None


def test_plan_cut_ignores_summary_turns_and_bare_summaries():
    roles = ["summary", "assistant", "user", "assistant", "user"]
    assert plan_cut(roles, 2) is None  # only the old summary would be re-summarized
    assert plan_cut(roles, 1) == 4


def test_plan_cut_needs_one_user():
    import pytest

    with pytest.raises(ValueError):
        plan_cut(["user"], 0)


def test_plan_chunks():
    assert plan_chunks([10, 20, 30, 40], limit=50) == [range(0, 2), range(2, 3), range(3, 4)]
    assert plan_chunks([100, 1, 1], limit=50) == [range(0, 1), range(1, 3)]
    assert plan_chunks([], limit=50) == []
    sizes = [7] * 100
    chunks = plan_chunks(sizes, limit=60)
    assert [i for c in chunks for i in c] == list(range(100))
    assert all(sum(sizes[i] for i in c) <= 60 for c in chunks)


def test_drop_is_enough():
    assert drop_is_enough(1000, 900)
    assert not drop_is_enough(1000, 901)
    assert drop_is_enough(1000, 990, min_fraction=0.01)


def test_clear_minimum_relaxes_past_the_trigger():
    from engram.graph import clear_minimum

    t = thresholds(128_000)
    batch = clear_batch_minimum(t)
    assert clear_minimum(t.clear + 10, t.clear + 10, t) == batch
    # 1,000 over the trigger: freeing 1,001 is enough to avoid a summary
    assert clear_minimum(t.trigger + 1_000, t.trigger + 1_000, t) == 1_001
    # estimates reconciled at 2x: raw savings count half
    assert clear_minimum(t.trigger + 1_000, (t.trigger + 1_000) // 2, t) == 501
    # far over: the usual batch minimum is the ceiling
    assert clear_minimum(t.window * 2, t.window * 2, t) == batch


def test_plan_clear_includes_stale_turn_context():
    savings = [(3, 100), (5, 100), (7, 100), (9, 100)]
    assert plan_clear(savings, min_saving=1, stale=[(1, 50), (6, 0)]) == [1, 3]
    assert plan_clear([], min_saving=40, stale=[(1, 50)]) == [1]
    assert plan_clear([], min_saving=60, stale=[(1, 50)]) == []


def test_summary_budget_is_the_trigger_reserve():
    from engram.graph import summary_budget

    assert summary_budget(32_000) == 8_000
    assert summary_budget(128_000) == 20_000
    assert summary_budget(2_000) == 1_000


def test_a_remembering_counter_counts_each_text_once_with_the_same_result():
    seen: list[str] = []

    def words(text: str) -> int:
        seen.append(text)
        return len(text.split())

    count = remembering(words)
    lines = ["def f(x):", "", "    return x", "", "def f(x):"]
    assert [count(line) for line in lines] == [words(line) for line in lines]
    assert seen[:3] == ["def f(x):", "", "    return x"]
    assert len(seen) == 3 + len(lines)  # the remembering counter asked three times
    assert remembering(count_text)("  indented line 42") == count_text("  indented line 42")
