"""A tool call whose arguments cannot be read becomes a call answered with why, never run."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from engram.graph.tools import MALFORMED_CALLS, answerable, malformed_reason


def test_unreadable_calls_join_the_readable_ones_with_their_reasons():
    reply = AIMessage(
        content="",
        tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "ok"}],
        invalid_tool_calls=[
            {"name": "write_file", "args": '{"path": "x"', "id": "cut", "error": "bad"},
            {"name": None, "args": "7", "id": "num", "error": "bad"},
            {"name": "grep_code", "args": "x" * 500, "id": None, "error": "bad"},
        ],
    )
    fixed = answerable(reply)
    assert fixed.invalid_tool_calls == [] and reply.invalid_tool_calls  # a copy
    names = [(c["name"], c["args"]) for c in fixed.tool_calls]
    assert names == [
        ("read_file", {"path": "a.py"}),
        ("write_file", {}),
        ("unnamed_tool", {}),
        ("grep_code", {}),
    ]
    ids = [str(c["id"]) for c in fixed.tool_calls]
    assert ids[:3] == ["ok", "cut", "num"] and ids[3].startswith("call_")
    assert malformed_reason(fixed, "ok") is None
    assert "not valid JSON" in str(malformed_reason(fixed, "cut"))
    assert "not an object (int)" in str(malformed_reason(fixed, "num"))
    long = str(malformed_reason(fixed, ids[3]))
    assert long.endswith("Call the tool again with its arguments as one JSON object.")
    assert '"' + "x" * 200 + '" …' in long and "x" * 201 not in long
    assert set(fixed.additional_kwargs[MALFORMED_CALLS]) == set(ids[1:])


def test_a_reply_without_unreadable_calls_is_left_as_it_is():
    reply = AIMessage(content="done")
    assert answerable(reply) is reply and malformed_reason(reply, "any") is None


def test_an_unreadable_reply_is_a_failure_not_a_user_mistake():
    from engram.cli._command_support import EXIT_FAILURE, EXIT_USER_ERROR, known_failure
    from engram.graph import ConfigError, ModelReplyError

    message, hint, code = known_failure(ModelReplyError("two replies …"))  # type: ignore[misc]
    assert code == EXIT_FAILURE and "another model" in hint
    assert known_failure(ConfigError("bad", hint="fix it")) == ("bad", "fix it", EXIT_USER_ERROR)
    assert known_failure(RuntimeError("bug")) is None  # a bug keeps its traceback


def test_every_call_of_a_reply_gets_an_id_of_its_own():
    reply = AIMessage(
        content="",
        tool_calls=[
            {"name": "run_command", "args": {"command": "x"}, "id": "same"},
            {"name": "edit_file", "args": {"path": "a"}, "id": "same"},
            {"name": "read_file", "args": {"path": "b"}, "id": ""},
        ],
        invalid_tool_calls=[{"name": "write_file", "args": "{", "id": "same", "error": "bad"}],
    )
    fixed = answerable(reply)
    ids = [str(c["id"]) for c in fixed.tool_calls]
    assert ids[0] == "same" and len(set(ids)) == 4 and all(ids)
    assert [c["name"] for c in fixed.tool_calls] == [
        "run_command",
        "edit_file",
        "read_file",
        "write_file",
    ]
    assert malformed_reason(fixed, ids[3]) and malformed_reason(fixed, "same") is None
    assert (
        MALFORMED_CALLS
        not in answerable(reply.model_copy(update={"invalid_tool_calls": []})).additional_kwargs
    )
