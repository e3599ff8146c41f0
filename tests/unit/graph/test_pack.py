"""Context pack: budget formula, feedback arithmetic, progressive fill, deterministic render."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.graph.pack import record_hit, record_usage
from engram.graph.pack._budget import (
    BASE_FRACTION,
    DEFAULT_CONTEXT_RATIO,
    DEVIATION_STREAK,
    HIT_RATE_WINDOW,
    PRIOR_HIT_RATE,
    RATIO_STEP,
    context_ratio,
    hit_rate,
    memory_weight,
    plan_budget,
)
from engram.graph.pack._filling import PASSES, SECTION_ORDER, PackItem, fill_pack
from engram.stores.memory import Feedback


def words(text: str) -> int:
    return len(text.split())


# --- budget formula ----------------------------------------------------------------------


def test_seed_example_debug_task_on_200k_window():
    # The pack budget formula: budget = 200K × 0.6 × (0.3 + 0.4 × hit rate) × 0.7 for a debug task.
    feedback = Feedback(hits=tuple([True] * 8 + [False] * 2))
    plan = plan_budget(200_000, "debug", feedback)
    assert plan.base == 120_000
    assert plan.memory_weight == pytest.approx(0.3 + 0.4 * 0.8)
    assert plan.context_ratio == 0.7
    assert plan.budget == int(120_000 * (0.3 + 0.4 * 0.8) * 0.7)
    assert plan.source == "formula"


@pytest.mark.parametrize(
    ("task_type", "ratio"),
    [
        ("debug", 0.7),
        ("refactor", 0.5),
        ("explain", 0.3),
        ("feature", 0.3),
        ("docs", DEFAULT_CONTEXT_RATIO),
        ("ops", DEFAULT_CONTEXT_RATIO),
    ],
)
def test_ratio_table(task_type, ratio):
    assert context_ratio(task_type) == ratio
    plan = plan_budget(100_000, task_type)
    assert plan.budget == int(100_000 * BASE_FRACTION * memory_weight(PRIOR_HIT_RATE) * ratio)


def test_memory_weight_bounds():
    assert memory_weight(0.0) == pytest.approx(0.3)
    assert memory_weight(1.0) == pytest.approx(0.7)
    assert memory_weight(7.0) == pytest.approx(0.7)
    assert memory_weight(-1.0) == pytest.approx(0.3)


def test_override_wins_but_is_capped_by_window():
    assert plan_budget(8_000, "debug", override=5_000).budget == 5_000
    plan = plan_budget(8_000, "debug", override=50_000)
    assert plan.budget == 8_000 and plan.source == "override"


def test_learned_ratio_replaces_table():
    assert plan_budget(10_000, "debug", Feedback(ratio=0.2)).context_ratio == 0.2


def test_hit_rate_counts_only_the_last_window():
    hits = (False,) * 5 + (True,) * 7 + (False,) * 3
    assert hit_rate(Feedback(hits=hits)) == pytest.approx(0.7)
    assert hit_rate(Feedback()) == PRIOR_HIT_RATE


def test_hit_window_keeps_last_ten():
    feedback = Feedback()
    for used in [False] * 5 + [True] * HIT_RATE_WINDOW:
        feedback = record_hit(feedback, used)
    assert len(feedback.hits) == HIT_RATE_WINDOW
    assert hit_rate(feedback) == 1.0


# --- deviation feedback -----------------------------------------------------------------


def test_three_consecutive_misses_move_ratio_toward_actual():
    feedback = Feedback()
    for _ in range(DEVIATION_STREAK - 1):
        feedback = record_usage(feedback, task_type="debug", planned=1000, actual=500)
        assert feedback.ratio is None
    feedback = record_usage(feedback, task_type="debug", planned=1000, actual=500)
    assert feedback.ratio == pytest.approx(0.7 - RATIO_STEP)
    assert feedback.deviations == ()


def test_overuse_moves_ratio_up():
    feedback = Feedback()
    for _ in range(DEVIATION_STREAK):
        feedback = record_usage(feedback, task_type="explain", planned=1000, actual=1400)
    assert feedback.ratio == pytest.approx(0.3 + RATIO_STEP)


def test_on_plan_task_breaks_the_streak():
    feedback = Feedback()
    feedback = record_usage(feedback, task_type="debug", planned=1000, actual=500)
    feedback = record_usage(feedback, task_type="debug", planned=1000, actual=500)
    feedback = record_usage(feedback, task_type="debug", planned=1000, actual=900)  # 10 % off
    assert feedback.deviations == ()
    feedback = record_usage(feedback, task_type="debug", planned=1000, actual=500)
    assert feedback.ratio is None


def test_step_never_overshoots_the_actual():
    feedback = Feedback()
    for _ in range(DEVIATION_STREAK):
        feedback = record_usage(feedback, task_type="debug", planned=1000, actual=820)
    # target 0.7 × 0.82 = 0.574 is further than one step: exactly one step.
    assert feedback.ratio == pytest.approx(0.65)
    near = Feedback(ratio=0.2, deviations=(1.2, 1.2))
    moved = record_usage(near, task_type="debug", planned=1000, actual=1200)
    assert moved.ratio == pytest.approx(0.24)  # 0.2 × 1.2 is closer than one step


# --- progressive fill -------------------------------------------------------------------


def item(section: str, n_words: int, tag: str = "w", **kw) -> PackItem:
    return PackItem(section=section, text=" ".join(f"{tag}{i}" for i in range(n_words)), **kw)


def sample(seed: int = 0) -> list[PackItem]:
    rng = random.Random(seed)
    out = []
    for name in SECTION_ORDER:
        for k in range(rng.randint(0, 12)):
            out.append(item(name, rng.randint(1, 80), tag=f"{name}{k}-", path=f"{name}/{k}.py"))
    return out


def check_budgets(pack, budget):
    assert pack.tokens <= budget
    assert words(pack.text) <= budget
    for section in pack.sections:
        assert section.tokens <= section.budget
        # Tags and heading are counted: a section's own text never exceeds its tokens.
        if section.items:
            assert sum(words(i.text) for i in section.items) < section.tokens
    assert pack.tokens == sum(s.tokens for s in pack.sections)


@given(seed=st.integers(0, 10_000), budget=st.integers(0, 3_000))
@settings(max_examples=150, deadline=None)
def test_fill_respects_every_section_budget(seed, budget):
    check_budgets(fill_pack(sample(seed), budget, words), budget)


def test_passes_give_shares_and_carry_unused_budget():
    budget = 1000
    candidates = [item("code_map", 5, tag=f"m{i}-") for i in range(200)]
    candidates += [item("slices", 10, tag=f"s{i}-") for i in range(200)]
    pack = fill_pack(candidates, budget, words)
    by_name = {s.name: s for s in pack.sections}
    # rules and memory have nothing: pass 1 goes to the code map, capped at its share.
    assert by_name["code_map"].budget == int(budget * PASSES[0].fraction)
    assert by_name["code_map"].tokens <= int(budget * PASSES[0].fraction)
    # slices get their 50 % plus what the code map and the empty history left unused.
    assert by_name["slices"].tokens > budget * PASSES[1].fraction
    assert pack.tokens >= budget - 20
    check_budgets(pack, budget)


def test_rules_cannot_starve_the_code_map():
    candidates = [item("rules", 30, tag=f"r{i}-") for i in range(50)]
    candidates += [item("code_map", 5, tag=f"m{i}-") for i in range(50)]
    pack = fill_pack(candidates, 1000, words)
    assert pack.section("code_map").items
    assert pack.section("rules").dropped > 0


def test_contiguous_sections_stop_at_first_misfit_but_slices_skip():
    candidates = [item("memory", 5), item("memory", 500), item("memory", 5)]
    candidates += [
        item("slices", 5, tag="a"),
        item("slices", 900, tag="b"),
        item("slices", 5, tag="c"),
    ]
    pack = fill_pack(candidates, 600, words)
    assert len(pack.section("memory").items) == 1
    assert [i.text[0] for i in pack.section("slices").items] == ["a", "c"]


def test_zero_budget_gives_empty_pack():
    pack = fill_pack(sample(3), 0, words)
    assert pack.tokens == 0 and pack.text == ""


def test_same_inputs_give_byte_identical_pack():
    a = fill_pack(sample(7), 900, words)
    b = fill_pack(sample(7), 900, words)
    assert a.text == b.text and a.to_dict() == b.to_dict()


def test_render_is_tagged_in_section_order():
    candidates = [item("slices", 3, tag="s"), item("rules", 3, tag="r"), item("code_map", 3)]
    text = fill_pack(candidates, 500, words).text
    assert text.index('<section name="rules">') < text.index('<section name="code_map">')
    assert text.index('<section name="code_map">') < text.index('<section name="slices">')
    assert text.count("</section>") == 3
