"""The terminal's live view of a turn, and the helpers that stop a turn on Ctrl-C."""

from __future__ import annotations

import io

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from rich.console import Console

from engram.cli._live_view import LiveView, is_live, result_diff
from engram.cli._turn_runner import _final_answer
from engram.cli._turn_stop import STOPPED, close_stopped_calls, stopped_message
from engram.graph.tools import COMMAND_EVENT, OUTPUT_EVENT

EDIT_RESULT = (
    '<tool_result tool="edit_file" trust="untrusted-data">edited app.py\n'
    "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet():\n-    return 'helo'\n"
    "+    return 'hello'\n</tool_result>"
)


def _view() -> tuple[LiveView, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    plain = {"force_terminal": False, "color_system": None, "width": 100}
    return LiveView(Console(file=out, **plain), Console(file=err, **plain)), out, err


def test_model_text_streams_and_only_the_model_node_counts():
    view, out, _ = _view()
    for piece in ("The fix ", "is done."):
        view.handle("messages", (AIMessageChunk(content=piece), {"langgraph_node": "call_model"}))
    view.handle(
        "messages", (AIMessageChunk(content="SUMMARY"), {"langgraph_node": "compact_history"})
    )
    view.handle("updates", {"call_model": {"messages": [AIMessage(content="The fix is done.")]}})
    assert out.getvalue() == "The fix is done.\n"
    assert view.streamed


def test_text_in_content_blocks_streams_and_reasoning_does_not():
    view, out, _ = _view()
    pieces = [
        [{"type": "reasoning", "reasoning": "think"}],
        [{"type": "text", "text": "Done "}],
        [{"type": "text", "text": "now.", "index": 0}],
    ]
    for piece in pieces:
        view.handle("messages", (AIMessageChunk(content=piece), {"langgraph_node": "call_model"}))
    view.handle("updates", {"call_model": {"messages": [AIMessage(content="Done now.")]}})
    assert out.getvalue() == "Done now.\n"


def test_the_answer_of_a_reply_in_content_blocks_is_its_text():
    reply = AIMessage(
        content=[{"type": "reasoning", "reasoning": "hm"}, {"type": "text", "text": "The answer."}]
    )
    assert _final_answer([HumanMessage("q"), reply]) == "The answer."


def test_an_edit_shows_its_diff_unless_the_approval_question_showed_it():
    view, _, err = _view()
    result = ToolMessage(content=EDIT_RESULT, tool_call_id="e1", name="edit_file")
    view.handle("updates", {"run_tools": {"messages": [result]}})
    assert "+    return 'hello'" in err.getvalue() and "-    return 'helo'" in err.getvalue()
    view, _, err = _view()
    view.shown_in_approval({"call_id": "e1"})
    view.handle("updates", {"run_tools": {"messages": [result]}})
    assert "return 'hello'" not in err.getvalue() and "✓" in err.getvalue()


def test_command_output_is_shown_line_by_line_as_it_arrives():
    view, _, err = _view()
    view.handle("custom", {"event": COMMAND_EVENT, "command": "make test", "source": "verify"})
    view.handle("custom", {"event": OUTPUT_EVENT, "text": "first li"})
    assert "first" not in err.getvalue()  # half a line waits for its end
    view.handle("custom", {"event": OUTPUT_EVENT, "text": "ne\nsecond"})
    assert "first line" in err.getvalue() and "second" not in err.getvalue()
    view.handle("updates", {"verify_changes": {"verification": {"status": "passed"}}})
    assert err.getvalue().splitlines()[-1] == "second"
    assert "$ make test" in err.getvalue()


def test_a_step_s_end_stops_the_spinner_its_start_began():
    view, _, _ = _view()
    view.handle("tasks", {"id": "1", "name": "run_tools", "input": {}, "triggers": []})
    assert view.step == "run_tools" and view.status is not None
    view.handle("tasks", {"id": "2", "name": "other", "result": {}, "error": None})
    assert view.status is not None  # another step's end leaves it spinning
    view.handle("tasks", {"id": "1", "name": "run_tools", "result": {}, "error": None})
    assert view.status is None


def test_result_diff_cuts_long_diffs_and_ignores_results_without_one():
    assert result_diff("read 3 lines") == ""
    long = "--- a/x\n+++ b/x\n" + "\n".join(f"+line {i}" for i in range(200))
    shown = result_diff(long).splitlines()
    assert len(shown) == 81 and shown[-1] == "… 122 more lines"


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("stdin", "stdout", "as_json", "live"),
    [
        (True, True, False, True),
        (True, True, True, False),  # --json never streams
        (False, True, False, False),
        (True, False, False, False),
    ],
)
def test_the_live_view_needs_a_terminal_on_both_ends_and_no_json(
    monkeypatch, stdin, stdout, as_json, live
):
    monkeypatch.setattr("sys.stdin", _Stream(stdin))
    monkeypatch.setattr("sys.stdout", _Stream(stdout))
    assert is_live(as_json=as_json) is live


def test_a_stopped_step_answers_every_open_call():
    calls = AIMessage(
        content="",
        tool_calls=[
            {"id": "c1", "name": "run_command", "args": {"command": "sleep 9"}},
            {"id": "c2", "name": "read_file", "args": {"path": "a"}},
        ],
    )
    closing = close_stopped_calls([HumanMessage(content="go"), calls])
    assert [(m.tool_call_id, m.name, m.content) for m in closing] == [
        ("c1", "run_command", STOPPED),
        ("c2", "read_file", STOPPED),
    ]
    assert close_stopped_calls([HumanMessage(content="go")]) == []


def test_the_stop_message_says_how_to_go_on():
    text = stopped_message("call_model", "s1", chat=False)
    assert "the model call" in text and "engram sessions resume s1" in text
    assert "next message" in stopped_message("run_tools", "s1", chat=True)
