"""Deterministic extractive summary of a history span, used when no model can summarize.

The summary fills the same four sections a model summary must have: user requests verbatim,
tool commands and their outcomes (error lines verbatim), assistant conclusions, files touched,
and the latest request and conclusion as open items. Pure: no I/O, no model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engram.graph._tokens import content_text
from engram.graph.compaction._history_rules import (
    ACKNOWLEDGEMENT,
    ERROR_LINE,
    SUMMARY_HEADER,
    SUMMARY_SECTIONS,
    is_summary,
    user_words,
)

EXTRACT_MAX_CHARS = 16_000
"""Longest extractive summary; older progress lines are dropped first to fit."""
USER_QUOTE_MAX_CHARS = 2_000
"""A user message longer than this is quoted by head and tail."""
ASSISTANT_NOTE_CHARS = 600
"""Characters kept of each assistant text message."""
OUTCOME_LINE_CHARS = 300
"""Characters kept of a tool outcome line."""
OUTCOME_SCAN_CHARS = 4_000
"""Characters scanned at each end of a long tool result for its outcome line."""
ARGS_CHARS = 160
"""Characters kept of a tool call's arguments."""
PATHS_PER_RESULT = 5
"""Paths taken from one tool result (a grep listing must not flood the section)."""
MAX_FILES = 80
"""Most file locations listed (the most recently mentioned win)."""

_WRAPPER = re.compile(r"</?tool_result\b[^>]*>")
_PATH = re.compile(
    r"(?<![\w/.@-])(?:\.{0,2}/)?(?:[\w-]+/)*[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}"
    r"(?::\d+(?:-\d+)?)?(?![\w/])"
)
_HEADING = re.compile(r"^#+\s*(.+?)\s*$")
_ROUTINE = re.compile(r"^- Ran .* → success: ")
_OMITTED = re.compile(r"^- \(\d+ [a-z ]+ omitted\)$")


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … {text[-half:]}"


def _paths(text: str, limit: int | None = None) -> list[str]:
    found: list[str] = []
    for match in _PATH.finditer(text):
        path = match.group(0)
        if path not in found and not path[0].isdigit():
            found.append(path)
            if limit is not None and len(found) >= limit:
                break
    return found


def _outcome(text: str, status: str) -> str:
    """Return the line that best tells how a tool call went (an error line if any)."""
    body = _WRAPPER.sub("", text).strip()
    total = body.count("\n") + 1
    if len(body) > 2 * OUTCOME_SCAN_CHARS:  # errors show at the start or the end
        body = f"{body[:OUTCOME_SCAN_CHARS]}\n{body[-OUTCOME_SCAN_CHARS:]}"
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    errors = [line for line in lines if ERROR_LINE.search(line)]
    if errors and (status == "error" or errors[0] is lines[0] or len(errors) <= 3):
        return "; ".join(_clip(e, OUTCOME_LINE_CHARS) for e in errors[:2])
    more = f" (+{total - 1} lines)" if total > 1 else ""
    return _clip(lines[0], OUTCOME_LINE_CHARS) + more


def split_sections(summary: str) -> dict[str, list[str]]:
    """Return the lines under each required section heading of a summary."""
    sections: dict[str, list[str]] = {name: [] for name in SUMMARY_SECTIONS}
    current: str | None = None
    for line in summary.splitlines():
        heading = _HEADING.match(line.strip())
        if heading:
            title = heading.group(1).strip("*: ").lower()
            current = next((s for s in SUMMARY_SECTIONS if s.lower() == title), None)
            continue
        if current is not None and line.strip():
            sections[current].append(line.rstrip())
    return sections


def render_sections(sections: dict[str, list[str]]) -> str:
    """Render the four sections as Markdown headings with their lines."""
    parts = []
    for name in SUMMARY_SECTIONS:
        lines = sections.get(name) or ["- (none)"]
        parts.append(f"## {name}\n" + "\n".join(lines))
    return "\n\n".join(parts)


def _collect(
    messages: Sequence[BaseMessage],
) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Return the sections, the paths named by people and tool calls, and those in results."""
    sections: dict[str, list[str]] = {name: [] for name in SUMMARY_SECTIONS}
    files: list[str] = []
    seen_in_results: list[str] = []
    calls: dict[str, str] = {}
    goals, progress = sections[SUMMARY_SECTIONS[0]], sections[SUMMARY_SECTIONS[1]]
    for message in messages:
        text = content_text(message.content)
        if is_summary(message):
            earlier = split_sections(text.removeprefix(SUMMARY_HEADER))
            for name in SUMMARY_SECTIONS:
                lines = [
                    ln
                    for ln in earlier[name]
                    if ln.strip() != "- (none)" and not _OMITTED.match(ln)
                ]
                if name == SUMMARY_SECTIONS[2]:
                    files.extend(ln.removeprefix("- ").strip() for ln in lines)
                elif name != SUMMARY_SECTIONS[3]:
                    sections[name].extend(lines)
        elif isinstance(message, HumanMessage):
            text = user_words(text)
            goals.append(f"- User: {_clip(text, USER_QUOTE_MAX_CHARS)}")
            files.extend(_paths(text))
        elif isinstance(message, AIMessage):
            if text.strip() and text != ACKNOWLEDGEMENT:
                progress.append(f"- Assistant: {_clip(text, ASSISTANT_NOTE_CHARS)}")
                files.extend(_paths(text))
            for call in message.tool_calls:
                args = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
                calls[str(call.get("id"))] = f"{call.get('name')}({_clip(args, ARGS_CHARS)})"
                files.extend(_paths(args))
        elif isinstance(message, ToolMessage):
            command = calls.get(message.tool_call_id, message.name or "tool")
            status = str(getattr(message, "status", "success"))
            progress.append(f"- Ran {command} → {status}: {_outcome(text, status)}")
            seen_in_results.extend(_paths(_WRAPPER.sub("", text), PATHS_PER_RESULT))
    return sections, files, seen_in_results


def _is_routine(line: str) -> bool:
    """Return True for a successful tool run whose outcome reports no error."""
    match = _ROUTINE.match(line)
    return match is not None and not ERROR_LINE.search(line[match.end() :])


def _drop_oldest(
    sections: dict[str, list[str]], name: str, max_chars: int, routine_only: bool
) -> None:
    """Drop the oldest lines of one section (only routine tool runs if asked) until it fits."""
    excess = len(render_sections(sections)) - max_chars
    lines = sections[name]
    keep = [True] * len(lines)
    dropped = saved = 0
    label = "routine tool runs" if routine_only else "earlier entries"
    for index, line in enumerate(lines):
        if saved - len(label) - 20 >= excess:
            break
        if routine_only and not _is_routine(line):
            continue
        keep[index] = False
        dropped += 1
        saved += len(line) + 1
    if dropped:
        sections[name] = [
            f"- ({dropped} {label} omitted)",
            *(line for line, kept in zip(lines, keep, strict=True) if kept),
        ]


def _fit(sections: dict[str, list[str]], max_chars: int) -> None:
    """Shrink to ``max_chars``: routine tool runs go first, then old progress, files, requests."""
    progress, files, goals = SUMMARY_SECTIONS[1], SUMMARY_SECTIONS[2], SUMMARY_SECTIONS[0]
    for name, routine_only in ((progress, True), (progress, False), (files, False), (goals, False)):
        if len(render_sections(sections)) <= max_chars:
            return
        _drop_oldest(sections, name, max_chars, routine_only)


def extractive_summary(
    messages: Sequence[BaseMessage], *, max_chars: int = EXTRACT_MAX_CHARS
) -> str:
    """Summarize ``messages`` deterministically into the four required sections.

    Args:
        messages: The span being compacted (it may include an earlier summary).
        max_chars: Upper bound on the summary length.

    Returns:
        Markdown with the four section headings, user requests quoted verbatim.
    """
    sections, files, seen_in_results = _collect(messages)
    named = list(dict.fromkeys(f for f in files if f))[-MAX_FILES:]
    extra = [f for f in dict.fromkeys(seen_in_results) if f and f not in set(named)]
    listed = named + extra[len(extra) - max(0, MAX_FILES - len(named)) :]
    sections[SUMMARY_SECTIONS[2]] = [f"- {path}" for path in listed]
    users = [m for m in messages if isinstance(m, HumanMessage) and not is_summary(m)]
    replies = [
        m
        for m in messages
        if isinstance(m, AIMessage) and content_text(m.content).strip() not in ("", ACKNOWLEDGEMENT)
    ]
    open_items = sections[SUMMARY_SECTIONS[3]]
    if users:
        latest = _clip(user_words(content_text(users[-1].content)), USER_QUOTE_MAX_CHARS)
        open_items.append(f"- Latest request in this span: {latest}")
    if replies:
        last = _clip(content_text(replies[-1].content), ASSISTANT_NOTE_CHARS)
        open_items.append(f"- Last assistant conclusion: {last}")
    _fit(sections, max_chars)
    return render_sections(sections)


def keep_user_requests(
    summary: str, messages: Sequence[BaseMessage], *, max_chars: int = EXTRACT_MAX_CHARS
) -> str:
    """Add to a model summary every user request of ``messages`` it does not quote verbatim.

    A model may paraphrase or drop an instruction; the user's own words (and those carried by
    an earlier summary) are appended under "User goals and constraints", oldest trimmed first
    if the section would exceed half of ``max_chars``.
    """
    sections = split_sections(summary)
    goals = sections[SUMMARY_SECTIONS[0]]
    collected, _, _ = _collect(messages)
    for line in collected[SUMMARY_SECTIONS[0]]:
        quote = line.removeprefix("- User: ").strip()
        if quote and quote not in summary:
            goals.append(line)
    only_goals = {name: (goals if name == SUMMARY_SECTIONS[0] else []) for name in SUMMARY_SECTIONS}
    if len(render_sections(only_goals)) > max_chars // 2:
        _drop_oldest(only_goals, SUMMARY_SECTIONS[0], max_chars // 2, routine_only=False)
        sections[SUMMARY_SECTIONS[0]] = only_goals[SUMMARY_SECTIONS[0]]
    return render_sections(sections)
