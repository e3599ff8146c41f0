"""Node ``call_model``: send the cache-ordered request to the chat model and record usage."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import ValidationError

from engram.graph import (
    CompactionEvent,
    Context,
    Deps,
    ModelNotConfiguredError,
    ModelReplyError,
    State,
    StateUpdate,
    as_sent,
    attach_context,
    attached_context,
    content_text,
    is_context_overflow,
    render_turn_context,
    usage_of,
)
from engram.graph.compaction import (
    Request,
    close_unanswered_calls,
    commit_messages,
    emergency_compact,
)
from engram.graph.tools import answerable, build_tools
from engram.nodes._support import record_messages, record_model_call

STEP_LIMIT_NOTE = "step limit reached: the model was asked to answer without further tool calls"


def with_turn_context(state: State) -> HumanMessage | None:
    """Return the current user message carrying the memory block and code context.

    Dynamic context goes after the history (never into the system prompt), so the cached
    prefix of the request stays byte-identical. The message keeps the user's text; the
    context rides beside it (``attach_context``) and is joined to it in every request
    (``as_sent``). Returns None when there is nothing to add or it was added already (also
    in the text, as sessions of older versions have it).
    """
    extra = render_turn_context(state.memory_block, str(state.context_pack.get("text", "")))
    if not extra:
        return None
    for message in reversed(state.messages):
        if isinstance(message, HumanMessage):
            if attached_context(message) or extra in content_text(message.content):
                return None
            return attach_context(message, f"\n\n{extra}")
    return None


async def _ask(runnable: Any, request: list[BaseMessage]) -> Any:
    """Call the model; a reply that cannot be read as a message is asked for once more.

    Raises:
        ModelReplyError: The retry could not be read either (LangChain failed to build the
            message: a tool call whose arguments are JSON but not an object, say).
    """
    try:
        return await runnable.ainvoke(request)
    except ValidationError:
        pass
    try:
        return await runnable.ainvoke(request)
    except ValidationError as exc:
        problems = exc.errors()
        what = str(exc)
        if problems:
            where = ".".join(str(part) for part in problems[0]["loc"])
            what = f"{where}: {problems[0]['msg']}"
        raise ModelReplyError(
            f"two replies of the model in a row could not be read ({what})"
        ) from exc


def _request(state: State, messages: list[BaseMessage]) -> list[BaseMessage]:
    return [SystemMessage(content=state.system_prompt), *(as_sent(m) for m in messages)]


async def call_model(state: State, runtime: Runtime[Context], *, deps: Deps) -> StateUpdate:
    """Call the model with the system prompt, the history and the bound tools."""
    context = runtime.context
    # Building the model and the tools touches the file system (certificates, the project
    # path); only the model's own I/O is async, so the rest runs off the event loop.
    model = await asyncio.to_thread(deps.model_factory, context)
    if model is None:
        raise ModelNotConfiguredError("no chat model is configured for this run")
    messages: list[BaseMessage] = list(state.messages)
    updated: list[BaseMessage] = []
    notes: list[str] = []
    # A session stopped by an older version after a fork at a pending tool step can reach the
    # model with unanswered calls; resuming it must not repeat the endpoint's 400.
    repair = close_unanswered_calls(messages)
    if repair is not None:
        messages = repair.messages
        notes.append(repair.note())
        await record_messages(context, list(repair.closed))
    if state.steps == 0:
        augmented = with_turn_context(state)
        if augmented is not None:
            messages = [augmented if m.id == augmented.id else m for m in messages]
            updated.append(augmented)
    last_step = state.steps + 1 >= context.max_steps
    tools = [] if last_step else await asyncio.to_thread(build_tools, context, deps, runtime.store)
    if last_step:
        notes.append(STEP_LIMIT_NOTE)
    if state.steps == 0:  # configuration problems are reported once a session, not every step
        toolset = await asyncio.to_thread(deps.mcp_tools, context)
        notes += [n for n in (toolset.notes if toolset else ()) if n not in state.notes]
    runnable: Any = model.bind_tools(tools) if tools else model
    compaction: list[CompactionEvent] = []
    request = _request(state, messages)
    await record_model_call(context, request, tools, state.steps + 1)
    try:
        reply = await _ask(runnable, request)
    except Exception as exc:  # provider errors differ; only an overflow is handled here
        if not is_context_overflow(exc):
            raise
        result = emergency_compact(messages, request=Request(system_prompt=state.system_prompt))
        compaction.append(result.event())
        if not result.committed:
            raise
        notes.append("the provider rejected the prompt as too long; compacted and retried once")
        messages = list(result.messages)
        updated = result.update()
        request = _request(state, messages)
        await record_model_call(context, request, tools, state.steps + 1)
        reply = await _ask(runnable, request)
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=str(reply.content))
    reply = answerable(reply)  # a call with unreadable arguments is answered, not dropped
    usage = usage_of(reply)
    await record_messages(context, [reply])
    history = commit_messages([*messages, reply]) if repair else [*updated, reply]
    return {
        "messages": history,
        "usage": usage,
        "last_usage": usage,
        "steps": state.steps + 1,
        "notes": notes,
        "compaction_log": compaction,
    }
