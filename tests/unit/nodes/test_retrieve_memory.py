"""Node retrieve_memory: profile, experience selection, facts block and degradations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore

from engram.graph import Context, Deps, State
from engram.graph.profile._phase0_loading import NO_STORE_NOTE
from engram.graph.profile._phase0_selection import RISK_BUDGETS
from engram.nodes import retrieve_memory
from engram.stores.memory import Episode, ExperienceStore, FactRecall, Pattern, Strategy, Trigger
from engram.stores.project import project_key

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


class FakeRecall:
    def __init__(self, block: str = "[Facts]\n- the API is versioned") -> None:
        self.block = block
        self.calls: list[dict] = []

    def __call__(self, store, query, *, project_key, window, count_tokens, now):
        self.calls.append({"query": query, "project_key": project_key, "window": window})
        return FactRecall(block=self.block, facts=(), tokens=count_tokens(self.block))


def _seed(store, project) -> None:
    repo = ExperienceStore(store, project_key(project))
    repo.put(
        Strategy(
            id="s-refactor",
            principle="Map dependencies before moving code",
            applies_to=("refactor",),
            priority="high",
        )
    )
    repo.put(Strategy(id="s-prod", principle="Have a rollback plan", applies_to=("production",)))
    repo.put(
        Pattern(
            id="p-prod",
            name="Unreviewed production change",
            trigger=Trigger(production=True),
            prevention="change review first",
            confidence=5,
            last_validated=NOW,
        )
    )
    repo.put(
        Episode(
            id="e-old",
            date=NOW - timedelta(days=10),
            task_type="ops",
            summary="deploy broke login",
            outcome="failure",
            lesson="stage first",
        )
    )


async def _run(task: str, tmp_path, *, store=None, context=None, recall=None):
    context = context or Context(project=str(tmp_path))
    state = State(messages=[HumanMessage(content=task)], task=task)
    runtime = Runtime(context=context, store=store)
    return retrieve_memory(
        state,
        runtime,
        deps=Deps(count_tokens=words),
        recall=recall or FakeRecall(),
        clock=lambda: NOW,
    )


async def test_high_risk_task_gets_strategies_patterns_and_failures(tmp_path):
    store = InMemoryStore()
    _seed(store, tmp_path)
    recall = FakeRecall()
    out = await _run("Deploy the new release to production", tmp_path, store=store, recall=recall)
    assert out["task_profile"]["risk"] == "high"
    injected = {(i["kind"], i["id"]) for i in out["memory_report"]["experience"]["injected"]}
    assert injected == {("strategy", "s-prod"), ("pattern", "p-prod"), ("episode", "e-old")}
    assert out["memory_block"].startswith("[Facts]")
    assert "Have a rollback plan" in out["memory_block"]
    assert recall.calls[0]["project_key"] == project_key(tmp_path)
    assert out["memory_report"]["tokens"] == words(out["memory_block"])
    assert out["approval"] == {}


async def test_low_risk_task_gets_only_strategies(tmp_path):
    store = InMemoryStore()
    _seed(store, tmp_path)
    out = await _run("Rename the variable tmp to count in worker.py", tmp_path, store=store)
    report = out["memory_report"]["experience"]
    assert out["task_profile"]["risk"] == "low"
    assert [i["id"] for i in report["injected"]] == ["s-refactor"]
    assert report["tokens"] <= RISK_BUDGETS["low"]


async def test_other_projects_experience_is_invisible(tmp_path):
    store = InMemoryStore()
    _seed(store, tmp_path / "elsewhere")
    (tmp_path / "here").mkdir()
    out = await _run(
        "Deploy to production",
        tmp_path,
        store=store,
        context=Context(project=str(tmp_path / "here")),
    )
    assert out["memory_report"]["experience"]["injected"] == []


async def test_no_store_degrades_with_a_note(tmp_path):
    out = await _run("Deploy to production", tmp_path, store=None)
    assert out["task_profile"]["risk"] == "high"
    assert out["memory_block"] == ""
    assert NO_STORE_NOTE in out["notes"]


async def test_auto_approve_records_the_decision(tmp_path):
    out = await _run(
        "Deploy to production",
        tmp_path,
        store=InMemoryStore(),
        context=Context(project=str(tmp_path), auto_approve=True),
    )
    assert out["approval"]["approved"] is True and out["approval"]["auto"] is True


async def test_project_tests_feed_the_profile(tmp_path):
    (tmp_path / "tests").mkdir()
    out = await _run("Refactor the parser", tmp_path, store=InMemoryStore())
    assert out["task_profile"]["has_tests"] is True


async def test_real_facts_recall_through_a_cached_fact_store(tmp_path):
    from engram.stores.memory import FactStore

    store = InMemoryStore()
    FactStore(store).add(
        "The payment service deploys with Helm charts",
        scope="project",
        project_key=project_key(tmp_path),
        source="user",
        provenance={"via": "test"},
        now=NOW,
    )
    opened: list[FactStore] = []

    def opener(context):
        opened.append(FactStore(store))
        return opened[-1]

    deps = Deps(count_tokens=words, open_fact_memory=opener)
    state = State(task="Deploy the payment service with Helm to production")
    runtime = Runtime(context=Context(project=str(tmp_path)), store=store)
    for _ in range(2):
        out = retrieve_memory(state, runtime, deps=deps, clock=lambda: NOW)
        assert "Helm charts" in out["memory_block"]
        assert len(out["memory_report"]["facts"]["ids"]) == 1
    assert len(opened) == 1
