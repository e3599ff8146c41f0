"""Markdown export/import of experience memory: layout and lossless round trip."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from engram.stores.memory import (
    Episode,
    ExperienceStore,
    Pattern,
    Strategy,
    Trigger,
    export_markdown,
    import_markdown,
)

KEY = "/srv/project"
NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


def _records(text: str = "line one\n## not a heading\n\\escaped\n# title\n\nlast"):
    return [
        Strategy(
            id="s-1",
            principle=f"Map dependencies first\n{text}",
            applies_to=("refactor", "multi-file"),
            priority="high",
            source="3 failures",
            created=NOW,
        ),
        Strategy(
            id="s-g",
            principle="Rollback plan for production",
            applies_to=("production",),
            scope="global",
            created=NOW,
        ),
        Pattern(
            id="pat-1",
            name="大规模重构前未建立测试保护",
            trigger=Trigger(task_types=("refactor",), min_files=6, has_tests=False),
            failure=text,
            root_cause="no baseline",
            prevention="1) snapshot 2) run tests",
            confidence=2,
            last_validated=NOW,
            needs_reanalysis=True,
            evidence=("ep-1",),
            conflicts_with=("pat-2",),
            created=NOW - timedelta(days=3),
        ),
        Episode(
            id="ep-1",
            date=NOW,
            task_type="refactor",
            summary="8-file refactor broke",
            outcome="failure",
            files=("a.py", "b/c.py"),
            lesson=text,
            prevention="",
            severity=1,
            patterns_applied=("pat-1",),
            thread_id="t-9",
        ),
    ]


def _dump(store) -> dict:
    repo = ExperienceStore(store, KEY)
    return {kind: repo.find(kind) for kind in ("strategy", "pattern", "episode")}


def test_layout_and_round_trip(tmp_path):
    source = InMemoryStore()
    repo = ExperienceStore(source, KEY)
    for record in _records():
        repo.put(record)
    counts = export_markdown(source, KEY, tmp_path, config={"risk_budgets": {"low": 1000}})
    assert counts == {"pattern": 1, "episode": 1, "strategy": 2}
    memory = tmp_path / "memory"
    assert (memory / "patterns" / "pat-1.md").exists()
    assert (memory / "episodic" / "ep-1.md").exists()
    assert (memory / "strategies" / "strategic-memory.md").exists()
    assert json.loads((memory / "retrieval_config.json").read_text())["risk_budgets"]
    pattern_md = (memory / "patterns" / "pat-1.md").read_text(encoding="utf-8")
    assert "## Root cause" in pattern_md and "\\## not a heading" in pattern_md

    target = InMemoryStore()
    report = import_markdown(target, KEY, tmp_path)
    assert report.counts == {"strategy": 2, "pattern": 1, "episode": 1}
    assert report.config == {"risk_budgets": {"low": 1000}}
    assert _dump(target) == _dump(source)
    # Global strategies go back to the global namespace.
    other = ExperienceStore(target, "/another/project")
    assert [s.id for s in other.find("strategy")] == ["s-g"]


def test_hand_edit_is_picked_up(tmp_path):
    source = InMemoryStore()
    ExperienceStore(source, KEY).put(_records()[2])
    export_markdown(source, KEY, tmp_path)
    path = tmp_path / "memory" / "patterns" / "pat-1.md"
    text = path.read_text(encoding="utf-8").replace("confidence: 2", "confidence: 4")
    text = text.replace("## Root cause\n\nno baseline\n", "## Root cause\nno test baseline")
    path.write_text(text, encoding="utf-8")
    target = InMemoryStore()
    import_markdown(target, KEY, tmp_path / "memory")
    pattern = ExperienceStore(target, KEY).get("pattern", "pat-1")
    assert pattern.confidence == 4 and pattern.root_cause == "no test baseline"


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(failure=texts, lesson=texts, principle=texts.filter(lambda t: t.strip() != ""))
def test_any_text_round_trips(tmp_path_factory, failure, lesson, principle):
    out = tmp_path_factory.mktemp("md")
    source = InMemoryStore()
    repo = ExperienceStore(source, KEY)
    repo.put(Strategy(id="s", principle=principle, applies_to=("debug",), created=NOW))
    repo.put(
        Pattern(
            id="p", name="n", trigger=Trigger(), failure=failure, created=NOW, last_validated=NOW
        )
    )
    repo.put(Episode(id="e", date=NOW, task_type="debug", summary="s", lesson=lesson))
    export_markdown(source, KEY, out)
    target = InMemoryStore()
    import_markdown(target, KEY, out)
    assert _dump(target) == _dump(source)
