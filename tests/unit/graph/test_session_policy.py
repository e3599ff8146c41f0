"""A resumed or replayed session keeps the policy it ran with, unless told otherwise."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from engram.cli._session_branch_commands import _keep_policy
from engram.cli._turn_runner import thread_config
from engram.graph import Context, Deps
from engram.sessions import App


def _app(tmp_path, ran_with: str) -> App:
    saver = InMemorySaver()
    context = Context(project=str(tmp_path), engram_home=str(tmp_path / "home"), policy=ran_with)
    config = thread_config("t1", context, "fix it")
    saver.put(
        {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}},
        {
            "v": 1,
            "id": "1ef00000-0000-6000-8000-000000000001",
            "ts": "",
            "channel_values": {},
            "channel_versions": {},
            "versions_seen": {},
        },
        {**config["metadata"], "step": 1},
        {},
    )
    resumed = Context(project=str(tmp_path), engram_home=str(tmp_path / "home"))  # ask
    return App(resumed, None, Deps(), InMemoryStore(), saver)


def test_resume_keeps_the_sessions_policy(tmp_path):
    app = _app(tmp_path, "yolo")
    _keep_policy(app, "t1", None, False)
    assert app.context.policy == "yolo"


def test_an_explicit_policy_and_yes_win(tmp_path):
    app = _app(tmp_path, "yolo")
    _keep_policy(app, "t1", "ask", True)
    assert app.context.policy == "ask" and app.context.auto_approve is True
