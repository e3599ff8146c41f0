"""Phase 0 in a compiled graph: real SQLite store, real HTTP model stub, interrupt round trip.

The graph is engram's own (``engram.builder``), compiled with ``InMemorySaver`` so the
confirmation interrupt can be resumed with ``Command(resume=...)``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from engram.builder import builder
from engram.graph import Context, Deps
from engram.graph._llm import make_model
from engram.stores.memory import Episode, ExperienceStore, Pattern, Strategy, Trigger
from engram.stores.project import project_key
from engram.stores.sqlite import open_memory_store
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

HIGH_TASK = "Change the password hashing in auth/passwords.py before the production release"
LOW_TASK = "Explain what auth/passwords.py does"


def _graph(deps: Deps, context: Context, store, **compile_kw):
    """The real engram graph (``builder(deps)``) with an in-memory checkpointer."""
    return builder(deps).compile(checkpointer=InMemorySaver(), store=store, **compile_kw)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "auth").mkdir(parents=True)
    (root / "auth" / "passwords.py").write_text("def hash_password(p):\n    return p\n")
    return root


@pytest.fixture
def store(tmp_path, project):
    with open_memory_store(tmp_path / "home") as opened:
        repo = ExperienceStore(opened, project_key(project))
        now = datetime.now(UTC)
        repo.put(
            Strategy(
                id="st-auth",
                principle="Keep old hashes verifiable during rollout",
                applies_to=("auth",),
                priority="high",
            )
        )
        repo.put(
            Pattern(
                id="pat-auth",
                name="Auth change without a login test",
                trigger=Trigger(features=("auth",)),
                prevention="add a login test first",
                confidence=3,
                last_validated=now,
            )
        )
        repo.put(
            Episode(
                id="ep-lockout",
                date=now - timedelta(days=3),
                task_type="feature",
                summary="hash change locked users out",
                outcome="failure",
                files=("auth/passwords.py",),
                lesson="migrate hashes lazily",
                severity=1,
            )
        )
        yield opened


def _context(project: Path, stub: OpenAIStub, **kw) -> Context:
    return Context(project=str(project), model="stub-model", base_url=stub.base_url, **kw)


def _user_text(request: dict) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


async def test_interrupt_constrain_resume_then_learn(project, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with OpenAIStub([{"content": "Done: hashes now use argon2."}]) as stub:
        context = _context(project, stub)
        app = _graph(Deps(model_factory=make_model, store=store), context, store)
        config = {"configurable": {"thread_id": "t-high"}}
        first = await app.ainvoke(
            {"messages": [HumanMessage(content=HIGH_TASK)]}, config, context=context
        )
        interrupts = first["__interrupt__"]
        payload = interrupts[0].value
        assert payload["profile"]["risk"] == "high"
        assert {w["id"] for w in payload["warnings"]} == {"pat-auth", "ep-lockout"}
        assert stub.requests == []  # nothing reached the model before the decision

        final = await app.ainvoke(
            Command(resume={"action": "constrain", "constraints": "staging only, no prod"}),
            config,
            context=context,
        )
        assert final["approval"]["action"] == "constrain"
        sent = _user_text(stub.requests[0])
        assert "staging only, no prod" in sent and "add a login test first" in sent
        learned = final["memory_report"]["learned"]
        assert learned["outcome"] == "unknown" and learned["patterns"] == {}
        repo = ExperienceStore(store, project_key(project))
        assert (
            repo.get("episode", learned["episode"]).task_type == final["task_profile"]["task_type"]
        )


async def test_reject_ends_the_task_without_calling_the_model(project, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with OpenAIStub([{"content": "should not be asked"}]) as stub:
        context = _context(project, stub)
        app = _graph(Deps(model_factory=make_model, store=store), context, store)
        config = {"configurable": {"thread_id": "t-reject"}}
        await app.ainvoke({"messages": [HumanMessage(content=HIGH_TASK)]}, config, context=context)
        final = await app.ainvoke(Command(resume={"action": "reject"}), config, context=context)
        assert final["approval"]["approved"] is False
        assert stub.requests == []
        assert "rejected" in final["messages"][-1].content


async def test_low_risk_and_auto_approve_skip_the_interrupt(project, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with OpenAIStub([{"content": "It hashes passwords."}, {"content": "ok"}]) as stub:
        for task, kw in ((LOW_TASK, {}), (HIGH_TASK, {"auto_approve": True})):
            context = _context(project, stub, **kw)
            app = _graph(Deps(model_factory=make_model, store=store), context, store)
            out = await app.ainvoke(
                {"messages": [HumanMessage(content=task)]},
                {"configurable": {"thread_id": f"t-{len(task)}"}},
                context=context,
            )
            assert "__interrupt__" not in out
        assert len(stub.requests) == 2


async def test_learning_after_success_and_failure(project, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    script = [
        {"content": "", "tool_calls": [{"name": "read_file", "args": {"path": "missing.py"}}]},
        {"content": "Could not finish."},
        {"content": "Done."},
    ]
    repo = ExperienceStore(store, project_key(project))
    with OpenAIStub(script) as stub:
        context = _context(project, stub, auto_approve=True)
        deps = Deps(model_factory=make_model, store=store)
        # A failing tool call: the episode is a failure, confidence is not touched.
        app = _graph(deps, context, store)
        out = await app.ainvoke(
            {"messages": [HumanMessage(content=HIGH_TASK)]},
            {"configurable": {"thread_id": "t-fail"}},
            context=context,
        )
        episode = repo.get("episode", out["memory_report"]["learned"]["episode"])
        assert episode.outcome == "failure" and episode.files == ("missing.py",)
        assert repo.get("pattern", "pat-auth").confidence == 3
        # The user's verdict (/good) before learning: confidence +1.
        app = _graph(deps, context, store, interrupt_before=["learn_from_task"])
        config = {"configurable": {"thread_id": "t-good"}}
        await app.ainvoke({"messages": [HumanMessage(content=HIGH_TASK)]}, config, context=context)
        await app.aupdate_state(config, {"outcome": "success"})
        out = await app.ainvoke(None, config, context=context)
        assert out["memory_report"]["learned"]["patterns"]["pat-auth"]["confidence"] == 4
        assert repo.get("pattern", "pat-auth").confidence == 4
