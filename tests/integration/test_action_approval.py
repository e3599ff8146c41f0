"""Edits and commands behind approval in the compiled graph: interrupts resumed with Command.

The graph is engram's own, compiled with ``InMemorySaver``; the model is the HTTP OpenAI stub
scripted to call the write tools and ``run_command``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from engram.builder import builder
from engram.graph import Context, Deps
from engram.graph._llm import make_model
from engram.stores.sqlite import open_memory_store
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

TASK = "Fix the greeting in app.py"
EDIT = {
    "name": "edit_file",
    "args": {"path": "app.py", "old_string": "'helo'", "new_string": "'hello'"},
}
EDIT2 = {
    "name": "edit_file",
    "args": {"path": "app.py", "old_string": "def greet", "new_string": "def greeting"},
}
COMMAND = {"name": "run_command", "args": {"command": "echo ran-it"}}


def _call(spec: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{**spec, "id": call_id}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def greet():\n    return 'helo'\n")
    return root


@pytest.fixture
def store(tmp_path):
    with open_memory_store(tmp_path / "home") as opened:
        yield opened


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


class Session:
    """One thread of the compiled graph against a scripted stub."""

    def __init__(self, project: Path, store: Any, stub: OpenAIStub, **settings: Any) -> None:
        self.context = Context(
            project=str(project), model="stub-model", base_url=stub.base_url, **settings
        )
        self.app = builder(Deps(model_factory=make_model, store=store)).compile(
            checkpointer=InMemorySaver(), store=store
        )
        self.config = {"configurable": {"thread_id": "t1"}}

    async def send(self, value: Any) -> dict[str, Any]:
        return await self.app.ainvoke(value, self.config, context=self.context)

    async def start(self, task: str = TASK) -> dict[str, Any]:
        return await self.send({"messages": [HumanMessage(content=task)]})


def _tool_results(state: dict[str, Any]) -> dict[str, str]:
    return {
        str(m.tool_call_id): str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)
    }


async def test_approve_then_reject_with_reason(project, store):
    script = [_call(EDIT, "e1"), _call(COMMAND, "c1"), {"content": "Fixed the greeting."}]
    with OpenAIStub(script) as stub:
        session = Session(project, store, stub)
        first = await session.start()
        payload = first["__interrupt__"][0].value
        assert payload["kind"] == "approve_action" and payload["tool"] == "edit_file"
        assert payload["files"] == ["app.py"]
        assert "-    return 'helo'\n+    return 'hello'" in payload["diff"]
        assert "return 'helo'" in (project / "app.py").read_text()  # nothing written yet

        second = await session.send(Command(resume={"action": "approve"}))
        assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
        command = second["__interrupt__"][0].value
        assert command["tool"] == "run_command" and command["command"] == "echo ran-it"

        final = await session.send(Command(resume={"action": "reject", "reason": "no shell today"}))
    results = _tool_results(final)
    assert "edited app.py" in results["e1"]
    assert "rejected by the user: no shell today" in results["c1"]
    assert "ran-it\n" not in results["c1"]
    assert final["files_changed"] == ["app.py"]
    assert final["tool_errors"] == 0
    assert final["messages"][-1].content == "Fixed the greeting."
    sent = str(stub.requests[-1]["messages"])
    assert "rejected by the user: no shell today" in sent


async def test_edit_the_proposal_and_approve_all_of_a_kind(project, store):
    script = [_call(COMMAND, "c1"), _call(EDIT, "e1"), _call(EDIT2, "e2"), {"content": "done"}]
    with OpenAIStub(script) as stub:
        session = Session(project, store, stub)
        first = await session.start()
        assert first["__interrupt__"][0].value["command"] == "echo ran-it"
        second = await session.send(
            Command(resume={"action": "edit", "args": {"command": "echo edited-it"}})
        )
        assert second["__interrupt__"][0].value["tool"] == "edit_file"
        final = await session.send(Command(resume={"action": "approve_all"}))
    results = _tool_results(final)
    assert "edited-it" in results["c1"] and "the user edited your proposal" in results["c1"]
    assert "ran-it" not in results["c1"].replace("edited-it", "")
    assert "edited app.py" in results["e2"]  # approved for the session: not asked again
    assert final["approved_kinds"] == ["edit"]
    assert (project / "app.py").read_text() == "def greeting():\n    return 'hello'\n"


async def test_an_unclear_answer_is_asked_again(project, store):
    with OpenAIStub([_call(EDIT, "e1"), {"content": "done"}]) as stub:
        session = Session(project, store, stub)
        await session.start()
        again = await session.send(Command(resume={"action": "perhaps"}))
        assert "unknown action 'perhaps'" in again["__interrupt__"][0].value["error"]
        final = await session.send(Command(resume="y"))
    assert "edited app.py" in _tool_results(final)["e1"]


async def test_auto_edit_allowlist_and_yolo(project, store):
    (project / ".engram").mkdir()
    (project / ".engram" / "settings.toml").write_text('[commands]\nallow = ["echo *"]\n')
    chained = {"name": "run_command", "args": {"command": "echo a; echo b"}}
    script = [_call(EDIT, "e1"), _call(COMMAND, "c1"), _call(chained, "c2"), {"content": "ok"}]
    with OpenAIStub(script) as stub:
        session = Session(project, store, stub, policy="auto-edit", trust_project=True)
        first = await session.start()
        asked = first["__interrupt__"][0].value
        assert asked["command"] == "echo a; echo b"  # the edit and the allowlisted echo passed
        final = await session.send(Command(resume="approve"))
    results = _tool_results(final)
    assert "edited app.py" in results["e1"] and "ran-it" in results["c1"]
    assert "a\nb" in results["c2"]

    (project / "app.py").write_text("def greet():\n    return 'helo'\n")
    with OpenAIStub([_call(EDIT, "e1"), _call(chained, "c1"), {"content": "ok"}]) as stub:
        yolo = await Session(project, store, stub, policy="yolo").start()
    assert "__interrupt__" not in yolo
    assert "a\nb" in _tool_results(yolo)["c1"]


async def test_high_risk_tasks_ask_even_under_yolo(project, store):
    risky = "Delete the production users table migration in app.py"
    with OpenAIStub([_call(EDIT, "e1"), {"content": "ok"}]) as stub:
        session = Session(project, store, stub, policy="yolo", auto_approve=True)
        first = await session.start(risky)
        payload = first["__interrupt__"][0].value
        assert payload["high_risk"] is True and payload["tool"] == "edit_file"
        final = await session.send(Command(resume={"action": "reject", "reason": "too risky"}))
    assert "rejected by the user: too risky" in _tool_results(final)["e1"]
    assert "helo" in (project / "app.py").read_text()


async def test_failed_edit_is_not_asked_and_reports_the_error(project, store):
    bad = {
        "name": "edit_file",
        "args": {"path": "app.py", "old_string": "nothing like it", "new_string": "x"},
    }
    with OpenAIStub([_call(bad, "e1"), {"content": "gave up"}]) as stub:
        final = await Session(project, store, stub).start()
    assert "__interrupt__" not in final
    assert "old_string was not found in app.py" in _tool_results(final)["e1"]
    assert final["tool_errors"] == 1


async def test_sessions_show_lists_a_pending_approval(project, engram_home):
    from typer.testing import CliRunner

    from engram.cli import app
    from engram.cli._runtime import open_app

    with OpenAIStub([_call(EDIT, "e1")]) as stub:
        context = Context(
            project=str(project),
            model="stub-model",
            base_url=stub.base_url,
            engram_home=str(engram_home),
        )
        with open_app(context) as engram:
            await engram.graph.ainvoke(
                {"messages": [HumanMessage(content=TASK)]},
                {"configurable": {"thread_id": "pending-1"}},
                context=context,
            )
    runner = CliRunner()
    shown = runner.invoke(app, ["sessions", "show", "pending-1", "--json", "--path", str(project)])
    assert shown.exit_code == 0, shown.output
    pending = json.loads(shown.stdout)["interrupts"]
    assert [(p["kind"], p["tool"], p["files"]) for p in pending] == [
        ("approve_action", "edit_file", ["app.py"])
    ]
    text = runner.invoke(app, ["sessions", "show", "pending-1", "--path", str(project)])
    assert "waiting for an answer: approve_action app.py" in text.stdout


@pytest.mark.parametrize("answer", ["approve_all", "reject"])
async def test_the_verify_checks_ask_under_the_policy(project, store, answer):
    (project / ".engram").mkdir()
    (project / ".engram" / "settings.toml").write_text('[verify]\ncommands = ["echo checks-ok"]\n')
    with OpenAIStub([_call(EDIT, "e1"), {"content": "done"}]) as stub:
        session = Session(project, store, stub, trust_project=True)
        await session.start()
        second = await session.send(Command(resume="approve"))
        asked = second["__interrupt__"][0].value
        assert (asked["call_id"], asked["command"]) == ("verify", "echo checks-ok")
        final = await session.send(Command(resume={"action": answer, "reason": "later"}))
    if answer == "approve_all":
        assert final["verification"]["status"] == "passed"
        assert final["verification"]["runs"][0]["exit_code"] == 0
        assert final["approved_kinds"] == ["command"]
    else:
        assert final["verification"]["status"] == "not-run"
        assert final["verification"]["reason"] == "later"
    assert final["memory_report"]["learned"]["outcome"] == (
        "success" if answer == "approve_all" else "unknown"
    )


async def test_two_calls_sharing_an_id_get_a_review_each(project, store):
    # reviews are keyed by call id: with one id for both calls, the approval of the edit was
    # the review of the command the user had just rejected, and the command ran
    evil = {"name": "run_command", "args": {"command": "touch pwned"}}
    script = [{"tool_calls": [{**evil, "id": "same"}, {**EDIT, "id": "same"}]}, {"content": "ok"}]
    with OpenAIStub(script) as stub:
        session = Session(project, store, stub)
        first = await session.start()
        assert first["__interrupt__"][0].value["tool"] == "run_command"
        second = await session.send(Command(resume={"action": "reject", "reason": "no"}))
        assert second["__interrupt__"][0].value["tool"] == "edit_file"
        final = await session.send(Command(resume={"action": "approve"}))
    assert not (project / "pwned").exists()
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    results = list(_tool_results(final).values())
    assert len(results) == 2 and "rejected by the user: no" in results[0]
    assert "edited app.py" in results[1]
    assert not stub.rejected  # each call answered once, under its own id
