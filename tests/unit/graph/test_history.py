from __future__ import annotations

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import add_messages
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engram.graph.compaction import commit_messages
from engram.graph.compaction._extractive import extractive_summary, split_sections
from engram.graph.compaction._history_rules import (
    ACKNOWLEDGEMENT,
    CLEARED_PREFIX,
    SUMMARY_HEADER,
    SUMMARY_SECTIONS,
    clear_tool_results,
    is_cleared,
    missing_sections,
    rebuild_history,
    roles_of,
    validate_history,
)


def call(name: str, cid: str, **args) -> dict:
    return {"name": name, "args": args, "id": cid}


def session() -> list:
    return [
        HumanMessage("Fix the crash in src/app/main.py. Never edit tests/fixtures.json.", id="u1"),
        AIMessage("", tool_calls=[call("read_file", "c1", path="src/app/main.py")], id="a1"),
        ToolMessage(
            "def main():\n    raise SystemExit(2)\n", tool_call_id="c1", name="read_file", id="t1"
        ),
        AIMessage(
            "",
            tool_calls=[
                call("grep_code", "c2", pattern="SystemExit"),
                call("glob_files", "c3", pattern="*.py"),
            ],
            id="a2",
        ),
        ToolMessage(
            "error: ripgrep failed: permission denied",
            tool_call_id="c2",
            name="grep_code",
            status="error",
            id="t2",
        ),
        ToolMessage(
            "src/app/main.py\nsrc/app/util.py", tool_call_id="c3", name="glob_files", id="t3"
        ),
        AIMessage("We decided to return exit code 0 from main().", id="a3"),
        HumanMessage("Also add a regression test.", id="u2"),
        AIMessage("Added tests/test_main.py.", id="a4"),
    ]


def test_valid_session_has_no_problems():
    assert validate_history(session()) == []
    assert validate_history([SystemMessage("s"), *session()]) == []


def test_orphan_tool_message():
    msgs = session()
    del msgs[1]
    problems = validate_history(msgs)
    assert any("orphan" in p for p in problems)


def test_unanswered_call_before_next_message():
    msgs = session()
    del msgs[4]
    problems = validate_history(msgs)
    assert any("not answered" in p for p in problems)


def test_duplicate_answer_is_a_problem():
    msgs = session()
    msgs.insert(3, ToolMessage("again", tool_call_id="c1", id="dup"))
    assert validate_history(msgs)


def test_first_non_system_must_be_user():
    assert validate_history([SystemMessage("s"), AIMessage("hi")])
    assert validate_history([SystemMessage("s"), HumanMessage("hi")]) == []


def test_pending_at_end_is_a_problem():
    msgs = [HumanMessage("x"), AIMessage("", tool_calls=[call("read_file", "c9")])]
    assert any("never answered" in p for p in validate_history(msgs))


def test_clear_keeps_ids_count_and_pairing():
    msgs = session()
    replaced = clear_tool_results(msgs, [2, 4])
    assert [m.id for m in replaced] == ["t1", "t2"]
    assert [m.tool_call_id for m in replaced] == ["c1", "c2"]
    assert all(is_cleared(m) for m in replaced)
    assert "read_file" in replaced[0].content and "grep_code" in replaced[1].content
    merged = add_messages(msgs, replaced)
    assert len(merged) == len(msgs)
    assert [m.id for m in merged] == [m.id for m in msgs]
    assert merged[2].content.startswith(CLEARED_PREFIX)
    assert validate_history(merged) == []


def test_clear_placeholder_names_spill_path():
    text = (
        "[output too large for context: 40,000 chars, 10 lines; full output saved to "
        ".engram/tool-outputs/grep-c1-abc.txt (read it with read_file and a line range)]\nhead"
    )
    msgs = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[call("grep_code", "c1")]),
        ToolMessage(text, tool_call_id="c1"),
    ]
    out = clear_tool_results(msgs, [2])[0]
    assert ".engram/tool-outputs/grep-c1-abc.txt" in out.content


def test_clear_rejects_non_tool_position():
    import pytest

    with pytest.raises(ValueError):
        clear_tool_results(session(), [0])


def test_rebuild_and_commit():
    msgs = [SystemMessage("sys"), *session()]
    summary = extractive_summary(msgs[1:8])
    new = rebuild_history(msgs, 8, summary)
    assert isinstance(new[0], SystemMessage)
    assert new[1].content.startswith(SUMMARY_HEADER)
    assert (
        isinstance(new[2], AIMessage)
        and not new[2].tool_calls
        and new[2].content == ACKNOWLEDGEMENT
    )
    assert new[3].id == "u2"
    assert validate_history(new) == []
    assert roles_of(new)[:4] == ["system", "summary", "assistant", "user"]
    update = commit_messages(new)
    assert isinstance(update[0], RemoveMessage) and update[0].id == REMOVE_ALL_MESSAGES
    state = add_messages(msgs, update)
    assert [m.content for m in state] == [m.content for m in new]


def test_extractive_summary_sections_and_verbatim_content():
    summary = extractive_summary(session()[:7])
    assert missing_sections(summary) == []
    sections = split_sections(summary)
    goals = "\n".join(sections["User goals and constraints"])
    assert "Fix the crash in src/app/main.py. Never edit tests/fixtures.json." in goals
    progress = "\n".join(sections["Progress and decisions"])
    assert "ripgrep failed: permission denied" in progress
    assert "We decided to return exit code 0 from main()." in progress
    files = sections["Files and code locations"]
    assert "- src/app/main.py" in files and "- tests/fixtures.json" in files
    assert "- src/app/util.py" in files


def test_extractive_summary_carries_an_earlier_summary_forward():
    first = rebuild_history(session(), 7, extractive_summary(session()[:7]))
    second = extractive_summary(first[:-1])
    assert "Never edit tests/fixtures.json." in second
    assert "We decided to return exit code 0" in second
    assert second.count("## User goals and constraints") == 1
    assert ACKNOWLEDGEMENT not in second


def test_extractive_summary_respects_max_chars():
    msgs = []
    for i in range(300):
        msgs += [HumanMessage(f"request {i}"), AIMessage(f"done step {i} " + "x" * 200)]
    summary = extractive_summary(msgs, max_chars=6000)
    assert len(summary) <= 6000
    assert missing_sections(summary) == []
    assert "request 299" in summary and "earlier entries omitted" in summary


def test_missing_sections():
    assert missing_sections("") == list(SUMMARY_SECTIONS)
    text = "\n".join(f"## {s}\n- x" for s in SUMMARY_SECTIONS[:3])
    assert missing_sections(text) == [SUMMARY_SECTIONS[3]]


def test_extractive_trims_routine_tool_runs_before_decisions_and_errors():
    msgs = []
    for i in range(200):
        msgs += [
            HumanMessage(f"request {i}"),
            AIMessage(
                "",
                tool_calls=[{"name": "read_file", "args": {"path": f"a/f{i}.py"}, "id": f"c{i}"}],
            ),
            ToolMessage("ok " * 50, tool_call_id=f"c{i}"),
            AIMessage(f"Decision {i}: keep it."),
        ]
    msgs += [
        AIMessage("", tool_calls=[{"name": "grep_code", "args": {}, "id": "e"}]),
        ToolMessage("ERROR E42: linker failed", tool_call_id="e", status="error"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {}, "id": "g"}]),
        ToolMessage("step 1 ok\nERROR E77: disk full\nstep 3 ok", tool_call_id="g"),
    ]
    summary = extractive_summary(msgs, max_chars=14_000)
    assert len(summary) <= 14_000
    assert "Decision 0: keep it." in summary and "ERROR E42: linker failed" in summary
    assert "ERROR E77: disk full" in summary  # a successful run that reported an error
    assert "routine tool runs omitted" in summary
    assert "- User: request 0" in summary


def test_placeholder_keeps_the_call_and_its_error_line():
    msgs = session()
    (out,) = clear_tool_results(msgs, [4])
    assert out.content.startswith(CLEARED_PREFIX)
    assert 'grep_code{"pattern": "SystemExit"}' in out.content
    assert "error: error: ripgrep failed: permission denied" in out.content
    assert "\n" not in out.content


def test_extractive_quotes_the_user_not_the_appended_context():
    from engram.graph import render_turn_context

    block = render_turn_context("memory: x", "code map: lib/a.py lib/b.py")
    msgs = [
        HumanMessage(f"Constraint: use UTC everywhere.\n\n{block}", id="u"),
        AIMessage("ok", id="a"),
    ]
    summary = extractive_summary(msgs)
    assert "- User: Constraint: use UTC everywhere." in summary
    assert "[engram context]" not in summary and "lib/a.py" not in summary


def test_clear_turn_context_keeps_the_users_words_and_id():
    from engram.graph import render_turn_context
    from engram.graph.compaction._history_rules import (
        CONTEXT_CLEARED,
        clear_turn_context,
        turn_context,
    )

    message = HumanMessage(f"do X\n\n{render_turn_context('memory: y')}", id="u")
    assert turn_context(message).startswith("\n\n[engram context]")
    cleared = clear_turn_context(message)
    assert cleared.id == "u" and cleared.content == "do X" + CONTEXT_CLEARED
    assert turn_context(cleared) == ""
