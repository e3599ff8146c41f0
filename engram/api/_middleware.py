"""engram's context management as LangChain v1 agent middleware for ``create_agent(...)``.

- ``BudgetMiddleware``: the budget check before every model call and the three compaction
  tiers — tool results over the spill limit are saved to the project (tier 1, on each tool
  call); past the clearing threshold older tool results become placeholders (tier 2); past
  the trigger the older history becomes a four-section summary (tier 3). Tiers 2 and 3 are
  written to the agent's state, so they never re-fire, and never break tool-call pairing.
- ``MemoryMiddleware``: Phase 0 — profile the task and append the memory block (rules of
  thumb from experience, relevant facts) to the user's message at the start of each run.
- ``ContextPackMiddleware``: append engram's budgeted context pack for the user's message.

Dynamic context goes into the current user message, never the system prompt, so the
provider's prompt cache keeps the whole prefix (as in engram's own agent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Command

from engram.api._pack import build_pack, settings_for
from engram.graph import (
    KEEP_RECENT_TOOL_RESULTS,
    KEEP_USER_TURNS,
    BudgetReport,
    Context,
    Counter,
    clear_minimum,
    content_text,
    count_text,
    decide,
    render_turn_context,
    run_coroutine,
    summary_budget,
    thresholds,
)
from engram.graph.compaction import Request, clear_pass, compact_now, is_cleared
from engram.graph.profile import run_phase0
from engram.nodes import SUMMARY_CHARS_PER_TOKEN
from engram.stores.files import spill_if_large
from engram.stores.project import ProjectState

ToolHandler = Callable[[ToolCallRequest], "ToolMessage | Command[Any]"]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable["ToolMessage | Command[Any]"]]


class EngramAgentState(AgentState[Any]):
    """Agent state with engram's budget report and compaction log."""

    engram_budget: NotRequired[BudgetReport]
    """The latest budget check: estimate, thresholds and the decision taken."""
    engram_compaction: NotRequired[list[dict[str, Any]]]
    """The compaction attempts before the latest model call, committed or rolled back."""


def _current_user(messages: Sequence[AnyMessage]) -> HumanMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


class BudgetMiddleware(AgentMiddleware[EngramAgentState, Any, Any]):
    """Check the token budget before each model call and compact in three tiers.

    Args:
        context_window: The model's context window in tokens (thresholds derive from it).
        project: The project the tools work on; tier 1 saves its large tool outputs in the
            project's state folder under ``engram_home``.
        engram_home: ENGRAM_HOME (default: the ``ENGRAM_HOME`` environment, else ~/.engram).
        model: Model that writes tier-3 summaries; None uses the extractive summarizer.
        system_prompt: The agent's system prompt, counted in estimates.
        tools: The agent's tools, whose schemas are counted in estimates.
        count: Token counter (default: engram's estimator).
    """

    state_schema = EngramAgentState

    def __init__(
        self,
        *,
        context_window: int,
        project: str | Path = ".",
        engram_home: str | Path | None = None,
        model: BaseChatModel | None = None,
        system_prompt: str = "",
        tools: Sequence[Any] = (),
        count: Counter = count_text,
    ) -> None:
        super().__init__()
        self.limits = thresholds(context_window)
        self.project_root = Path(project).expanduser().resolve()
        home = engram_home if engram_home is not None else Context.from_env().engram_home
        self.state = ProjectState(self.project_root, Path(home).expanduser().resolve())
        self.model = model
        self.request = Request(
            system_prompt=system_prompt,
            tool_schemas=tuple(convert_to_openai_tool(tool) for tool in tools),
            count=count,
        )

    def before_model(self, state: EngramAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Estimate the request; clear (tier 2) or summarize (tier 3) when over a threshold."""
        return run_coroutine(lambda: self.abefore_model(state, runtime))

    async def abefore_model(
        self, state: EngramAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async ``before_model``."""
        messages: list[BaseMessage] = list(state["messages"])
        raw = self.request.estimate(messages)
        applied: list[Literal["clear", "summarize"]] = []
        rolled_back: list[Literal["clear", "summarize"]] = []
        update: dict[str, Any] = {}
        if decide(raw, self.limits) != "ok":
            cleared = clear_pass(
                messages,
                self.request,
                keep_recent=KEEP_RECENT_TOOL_RESULTS,
                min_saving=clear_minimum(raw, raw, self.limits),
            )
            update["engram_compaction"] = [cleared.event()]
            if cleared.committed:
                messages, raw = list(cleared.messages), cleared.tokens_after
                applied.append("clear")
                update["messages"] = cleared.update()
            else:
                rolled_back.append("clear")
        if decide(raw, self.limits) == "summarize":
            summary = await compact_now(
                messages,
                keep_users=KEEP_USER_TURNS,
                model=self.model,
                request=self.request,
                summary_chars=summary_budget(self.limits.window) * SUMMARY_CHARS_PER_TOKEN,
            )
            update["engram_compaction"] = [*update["engram_compaction"], summary.event()]
            if summary.committed:
                # The summary's update replaces the whole history, tier 2 included.
                messages, raw = list(summary.messages), summary.tokens_after
                applied.append("summarize")
                update["messages"] = summary.update()
            else:
                rolled_back.append("summarize")
        # The report describes the request the model gets: its estimate, the tier that estimate
        # calls for (so "ok" only under the clearing threshold), what this check did to get
        # there, and how many tool results in it are placeholders (from this or earlier checks).
        update["engram_budget"] = BudgetReport(
            estimate=raw,
            raw_estimate=raw,
            window=self.limits.window,
            trigger=self.limits.trigger,
            clear=self.limits.clear,
            memory_cap=self.limits.memory_cap,
            decision=decide(raw, self.limits),
            applied=applied,
            rolled_back=rolled_back,
            cleared_results=sum(1 for m in messages if is_cleared(m)),
        )
        return update

    def _spilled(self, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        """Tier 1: save a tool output over the spill limit and keep its path and previews."""
        if not isinstance(result, ToolMessage) or not isinstance(result.content, str):
            return result
        spilled = spill_if_large(
            self.state, result.name or "tool", result.tool_call_id, result.content
        )
        if spilled.path is None:
            return result
        return result.model_copy(update={"content": spilled.text})

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: ToolHandler
    ) -> ToolMessage | Command[Any]:
        """Run the tool, then spill its output when it is over the limit (tier 1)."""
        return self._spilled(handler(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolMessage | Command[Any]:
        """Async ``wrap_tool_call``."""
        result = await handler(request)
        return await asyncio.to_thread(self._spilled, result)


class _UserTurnMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Append a block built from the user's request to that request at the start of a run."""

    def block_for(self, task: str) -> str:
        """Return the block for ``task`` ("" for none); blocking calls are allowed."""
        raise NotImplementedError

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Append ``block_for`` the user's request to it (the message keeps its id)."""
        message = _current_user(state["messages"])
        if message is None:
            return None
        block = render_turn_context(self.block_for(content_text(message.content)))
        text = content_text(message.content)
        if not block or block in text:
            return None
        return {"messages": [HumanMessage(content=f"{text}\n\n{block}", id=message.id)]}

    async def abefore_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async ``before_agent``: the block is built off the event loop."""
        return await asyncio.to_thread(self.before_agent, state, runtime)


class MemoryMiddleware(_UserTurnMiddleware):
    """Append engram's Phase 0 memory block to the user's message at the start of a run.

    Args:
        store: The memory store (facts and experience), e.g. ``open_memory_store(home)``.
        project: The project whose facts (besides global ones) are recalled.
        context: Further settings (context window for the memory cap); default ``ENGRAM_*``.
        count: Token counter (default: engram's estimator).
    """

    def __init__(
        self,
        store: BaseStore | None,
        project: str | Path | None = None,
        *,
        context: Context | None = None,
        count: Counter = count_text,
    ) -> None:
        super().__init__()
        self.store = store
        self.context = settings_for(project, context)
        self.count = count

    def block_for(self, task: str) -> str:
        """Profile the task and return its memory block (experience and facts)."""
        return run_phase0(
            self.store, task, self.context, count_tokens=self.count, now=datetime.now(UTC)
        ).block


class ContextPackMiddleware(_UserTurnMiddleware):
    """Append engram's context pack (rules, memory, code map, code slices) to the user's message.

    Args:
        project: The project to pack code from.
        budget: Pack budget in tokens (default: derived from the context window).
        context: Further settings (embedder, window, home); default ``ENGRAM_*``.
        store: Memory store for the pack's memory section; None opens the one in
            ``ENGRAM_HOME`` per run.
    """

    def __init__(
        self,
        project: str | Path | None = None,
        *,
        budget: int | None = None,
        context: Context | None = None,
        store: BaseStore | None = None,
    ) -> None:
        super().__init__()
        self.context = settings_for(project, context)
        self.budget = budget
        self.store = store

    def block_for(self, task: str) -> str:
        """Return the text of the task's context pack."""
        return build_pack(task, budget=self.budget, context=self.context, store=self.store).text
