"""Model summaries for compaction: one call reusing the cached prefix, or chunks then a merge.

The only place that calls a model to summarize. Failures propagate to ``compact_now``, which
falls back to the extractive summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engram.graph._budget import SUMMARY_CHUNK_CHARS, plan_chunks
from engram.graph._llm import usage_of
from engram.graph._tokens import content_text
from engram.graph.compaction._history_rules import missing_sections
from engram.graph.compaction._summary_prompts import (
    CHUNK_INSTRUCTION,
    MERGE_INSTRUCTION,
    SUMMARY_INSTRUCTION,
    retry_instruction,
)

TRANSCRIPT_MESSAGE_CHARS = SUMMARY_CHUNK_CHARS // 2
"""Longest rendering of one message in a chunk transcript (head and tail kept)."""


def render_transcript(messages: Sequence[BaseMessage]) -> list[str]:
    """Render each message as plain text for a chunked summary call."""
    out: list[str] = []
    for message in messages:
        text = content_text(message.content)
        if len(text) > TRANSCRIPT_MESSAGE_CHARS:
            half = TRANSCRIPT_MESSAGE_CHARS // 2
            text = f"{text[:half]}\n[… {len(text) - 2 * half:,} chars omitted …]\n{text[-half:]}"
        if isinstance(message, AIMessage):
            calls = "".join(
                f"\n[called {c.get('name')}({json.dumps(c.get('args', {}), ensure_ascii=False)})]"
                for c in message.tool_calls
            )
            out.append(f"Assistant: {text}{calls}")
        elif isinstance(message, ToolMessage):
            out.append(f"Tool result ({message.name or 'tool'}): {text}")
        elif isinstance(message, SystemMessage):
            out.append(f"System: {text}")
        else:
            out.append(f"User: {text}")
    return out


class Summarizer:
    """Calls the model for a summary, accumulating usage across calls."""

    def __init__(self, model: BaseChatModel, tools: Sequence[Any]) -> None:
        self.model: Any = model.bind_tools(list(tools), tool_choice="none") if tools else model
        self.usage: dict[str, int] = {"input": 0, "output": 0, "cache_read": 0, "calls": 0}

    async def ask(self, request: list[BaseMessage]) -> str:
        """Send one summary request and return the reply text."""
        reply = await self.model.ainvoke(request)
        for key, value in usage_of(reply).items():
            self.usage[key] = self.usage.get(key, 0) + value
        return content_text(reply.content).strip()

    async def checked(self, request: list[BaseMessage]) -> str:
        """Ask once, and once more if sections are missing; raise if still incomplete."""
        summary = await self.ask(request)
        missing = missing_sections(summary)
        if missing:
            retry = [*request, AIMessage(content=summary), HumanMessage(retry_instruction(missing))]
            summary = await self.ask(retry)
            missing = missing_sections(summary)
        if missing:
            raise ValueError(f"model summary lacks sections: {', '.join(missing)}")
        return summary


async def model_summary(
    summarizer: Summarizer, messages: Sequence[BaseMessage], cut: int, system_prompt: str
) -> tuple[str, int]:
    """Summarize ``messages[:cut]``: one call reusing the cached prefix, or chunks + merge."""
    span = list(messages[:cut])
    lines = render_transcript(span)
    head = [SystemMessage(content=system_prompt)] if system_prompt else []
    if sum(len(line) for line in lines) <= SUMMARY_CHUNK_CHARS:
        request = [*head, *span, HumanMessage(content=SUMMARY_INSTRUCTION)]
        return await summarizer.checked(request), 1
    chunks = plan_chunks([len(line) + 1 for line in lines])
    parts = []
    for index, chunk in enumerate(chunks, start=1):
        prompt = CHUNK_INSTRUCTION.format(
            index=index,
            total=len(chunks),
            instruction=SUMMARY_INSTRUCTION,
            transcript="\n".join(lines[i] for i in chunk),
        )
        parts.append(await summarizer.checked([*head, HumanMessage(content=prompt)]))
    merged = MERGE_INSTRUCTION.format(
        total=len(parts),
        instruction=SUMMARY_INSTRUCTION,
        summaries="\n\n".join(f"### Part {i}\n{p}" for i, p in enumerate(parts, start=1)),
    )
    return await summarizer.checked([*head, HumanMessage(content=merged)]), len(chunks) + 1
