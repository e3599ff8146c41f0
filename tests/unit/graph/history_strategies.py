"""Hypothesis strategies for random but valid chat histories (shared with bench/compaction)."""

from __future__ import annotations

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engram.graph import render_turn_context
from engram.graph.compaction._extractive import extractive_summary
from engram.graph.compaction._history_rules import ACKNOWLEDGEMENT, SUMMARY_HEADER

WORDS = [
    "fix",
    "the",
    "bug",
    "in",
    "src/app.py",
    "上下文",
    "压缩",
    "函数",
    "error:",
    "Traceback",
    "def",
    "return",
    "{",
    "}",
    "tests/test_x.py:12",
    "пример",
    "—",
    "\n",
    "  ",
]
TOOLS = ["read_file", "grep_code", "glob_files", "run_shell"]


@st.composite
def texts(draw, max_words: int = 40) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=max_words))
    return " ".join(words)


@st.composite
def tool_output(draw) -> str:
    kind = draw(st.sampled_from(["small", "small", "cjk", "huge", "spilled", "empty"]))
    if kind == "empty":
        return ""
    if kind == "huge":
        return draw(texts()) + " line\n" * draw(st.integers(1_000, 7_000))
    if kind == "spilled":
        return (
            "[output too large for context: 40,000 chars, 900 lines; full output saved to "
            ".engram/tool-outputs/grep_code-c1-abc.txt (read it with read_file and a line "
            "range)]\n--- first 10 chars ---\nhead\n--- last 10 chars ---\ntail"
        )
    if kind == "cjk":
        return "上下文压缩不能切断工具调用" * draw(st.integers(1, 50))
    return draw(texts())


@st.composite
def histories(draw, max_turns: int = 8) -> list:
    """A valid history: optional system, optional prior summary, then user turns."""
    counter = iter(range(1_000_000))
    msgs: list = []
    if draw(st.booleans()):
        msgs.append(SystemMessage("system rules", id=f"m{next(counter)}"))
    if draw(st.booleans()):
        old = [HumanMessage("earlier: " + draw(texts()), id="x")]
        msgs.append(
            HumanMessage(f"{SUMMARY_HEADER}\n{extractive_summary(old)}", id=f"m{next(counter)}")
        )
        msgs.append(AIMessage(ACKNOWLEDGEMENT, id=f"m{next(counter)}"))
    for _ in range(draw(st.integers(1, max_turns))):
        user = draw(texts()) or "go"
        if draw(st.booleans()):
            user += "\n\n" + render_turn_context(draw(texts()), draw(texts()))
        msgs.append(HumanMessage(user, id=f"m{next(counter)}"))
        for _ in range(draw(st.integers(0, 4))):
            n_calls = draw(st.integers(0, 4))
            calls = [
                {
                    "name": draw(st.sampled_from(TOOLS)),
                    "args": {"path": draw(texts(3))},
                    "id": f"call_{next(counter)}",
                }
                for _ in range(n_calls)
            ]
            msgs.append(AIMessage(draw(texts()), tool_calls=calls, id=f"m{next(counter)}"))
            answers = draw(st.permutations(calls)) if calls else []
            for call in answers:
                msgs.append(
                    ToolMessage(
                        draw(tool_output()),
                        tool_call_id=call["id"],
                        name=call["name"],
                        id=f"m{next(counter)}",
                        status=draw(st.sampled_from(["success", "error"])),
                    )
                )
        if draw(st.booleans()):
            msgs.append(AIMessage(draw(texts()) or "done", id=f"m{next(counter)}"))
    return msgs
