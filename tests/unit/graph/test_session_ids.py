"""Session ids: unique prefixes accepted, ambiguity refused, every thread listed with a title."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from engram.cli._command_support import _endpoint_message, is_history_rejection
from engram.graph import SessionError
from engram.sessions import resolve_checkpoint, resolve_thread, unique_prefixes
from engram.sessions._ids import match_prefix
from engram.stores.sqlite import session_metadata, session_rows, sqlite_connect
from engram.stores.sqlite._backends import ThreadedSqliteSaver


def test_exact_id_wins_over_a_longer_one_it_prefixes():
    assert match_prefix("crash-me", ["crash-me", "crash-me-copy"], "session id") == "crash-me"
    assert (
        match_prefix("crash-me-c", ["crash-me", "crash-me-copy"], "session id") == "crash-me-copy"
    )
    assert match_prefix("zzz", ["crash-me"], "session id") is None


def test_an_ambiguous_prefix_lists_the_candidates():
    with pytest.raises(SessionError) as caught:
        match_prefix("2026", ["20260101-a", "20260102-b", "other"], "session id")
    assert "ambiguous" in str(caught.value)
    assert "20260101-a" in str(caught.value) and "20260102-b" in str(caught.value)
    assert "more characters" in caught.value.hint


def test_unique_prefixes_are_the_shortest_that_tell_ids_apart():
    ids = ["1f0a-aaaa-1", "1f0a-aaab-2", "1f0b-cccc-3"]
    short = unique_prefixes(ids, 3)
    assert short == {"1f0a-aaaa-1": "1f0a-aaaa", "1f0a-aaab-2": "1f0a-aaab", "1f0b-cccc-3": "1f0b"}
    for full, prefix in short.items():
        assert [i for i in ids if i.startswith(prefix)] == [full]
    assert unique_prefixes(["abcdefghij"], 8) == {"abcdefghij": "abcdefgh"}


def _put(saver, thread: str, metadata: dict, messages=(), parent: str | None = None) -> str:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": list(messages)}
    checkpoint["channel_versions"] = {"messages": 1}
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if parent:
        config["configurable"]["checkpoint_id"] = parent
    saved = saver.put(config, checkpoint, metadata, {"messages": 1})
    return saved["configurable"]["checkpoint_id"]


@pytest.fixture(params=["sqlite", "memory"])
def saver(request, tmp_path: Path):
    if request.param == "memory":
        return InMemorySaver()
    sqlite = ThreadedSqliteSaver(sqlite_connect(tmp_path / "c.sqlite"))
    sqlite.setup()
    return sqlite


def test_threads_from_python_and_later_untitled_checkpoints_keep_a_title(saver):
    first = _put(saver, "cli-thread", {"project": "/p", "title": "fix the parser", "step": 0})
    _put(saver, "cli-thread", {"step": 1}, parent=first)  # advanced by graph.invoke later
    _put(
        saver,
        "api-thread",
        {"step": 0, "source": "loop"},
        [HumanMessage(content="explain  the\ncache", id="h")],
    )
    _put(saver, "other-project", {"project": "/q", "title": "elsewhere"})
    rows = {r["thread_id"]: r for r in session_rows(saver, "/p")}
    assert set(rows) == {"cli-thread", "api-thread"}
    assert rows["cli-thread"]["title"] == "fix the parser" and rows["cli-thread"]["step"] == 1
    assert rows["cli-thread"]["checkpoints"] == 2
    assert rows["api-thread"]["title"] == "explain the cache"
    assert {r["thread_id"] for r in session_rows(saver, None)} == {
        "cli-thread",
        "api-thread",
        "other-project",
    }
    assert session_metadata(saver, "cli-thread") == {"title": "fix the parser", "project": "/p"}
    assert session_metadata(saver, "new") == {}


def test_thread_and_checkpoint_prefixes_resolve_against_the_checkpointer(saver):
    first = _put(saver, "20260101-aaa", {})
    second = _put(saver, "20260101-aaa", {}, parent=first)
    _put(saver, "20260102-bbb", {})
    assert resolve_thread(saver, "20260101") == "20260101-aaa"
    with pytest.raises(SessionError, match="ambiguous"):
        resolve_thread(saver, "2026")
    with pytest.raises(SessionError, match="no session"):
        resolve_thread(saver, "nope")
    assert resolve_thread(saver, "nope", new_ok=True) == "nope"
    short = unique_prefixes([first, second], 8)
    assert resolve_checkpoint(saver, "20260101-aaa", short[second]) == second
    assert resolve_checkpoint(saver, "20260101-aaa", second) == second
    with pytest.raises(SessionError, match="no checkpoint"):
        resolve_checkpoint(saver, "20260102-bbb", first)


def _status_error(status: int, message: str) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(status, request=request)
    error_class = openai.BadRequestError if status == 400 else openai.InternalServerError
    return error_class(message, response=response, body={"message": message})


def test_a_history_400_is_reported_as_an_invalid_session_history():
    refused = _status_error(400, "messages[3]: tool calls ['call_1'] were not answered")
    assert is_history_rejection(refused)
    assert _endpoint_message(refused).startswith("the session history was invalid")
    openai_wording = _status_error(
        400,
        "An assistant message with 'tool_calls' must be "
        "followed by tool messages responding to each 'tool_call_id'",
    )
    assert is_history_rejection(openai_wording)
    assert not is_history_rejection(_status_error(400, "Unknown parameter: 'foo'"))
    assert not is_history_rejection(_status_error(500, "tool_call crashed the server"))
    assert "answered 500" in _endpoint_message(_status_error(500, "boom"))
