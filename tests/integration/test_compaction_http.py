"""Compaction against a real OpenAI-compatible HTTP server through ChatOpenAI."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import _convert_message_to_dict

from engram.graph.compaction import Request, compact_now
from engram.graph.compaction._history_rules import SUMMARY_SECTIONS, is_summary
from engram.graph.compaction._summary_prompts import SUMMARY_INSTRUCTION
from tests.support.openai_stub import OpenAIStub, history_problems

pytestmark = pytest.mark.integration

SYSTEM = "You are a careful coding model. " * 40
GOOD = "\n\n".join(f"## {s}\n- note" for s in SUMMARY_SECTIONS)


def session() -> list:
    msgs: list = []
    for t in range(5):
        msgs.append(HumanMessage(f"turn {t}: never touch config/prod_{t}.yaml", id=f"u{t}"))
        msgs.append(
            AIMessage(
                "",
                tool_calls=[
                    {"name": "read_file", "args": {"path": f"src/a{t}.py"}, "id": f"call_{t}a"},
                    {"name": "read_file", "args": {"path": f"src/b{t}.py"}, "id": f"call_{t}b"},
                ],
                id=f"a{t}",
            )
        )
        msgs.append(ToolMessage("x = 1\n" * 300, tool_call_id=f"call_{t}b", id=f"t{t}b"))
        msgs.append(ToolMessage("y = 2\n" * 300, tool_call_id=f"call_{t}a", id=f"t{t}a"))
        msgs.append(AIMessage(f"Done with step {t}.", id=f"d{t}"))
    return msgs


async def test_summary_call_reuses_the_cached_prefix_and_result_is_accepted():
    msgs = session()
    with OpenAIStub([{"content": "answer"}, {"content": GOOD}, {"content": "next"}]) as stub:
        model = ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="x", max_retries=0)
        await model.ainvoke([SystemMessage(SYSTEM), *msgs])  # the agent's previous call
        result = await compact_now(msgs, model=model, request=Request(system_prompt=SYSTEM))
        assert result.committed and result.source == "model"
        summary_body = stub.requests[1]
        assert summary_body["messages"][-1]["content"] == SUMMARY_INSTRUCTION
        assert result.usage["cache_read"] > 0  # the shared prefix was served from cache
        assert summary_body["messages"][:-1] == stub.requests[0]["messages"][:11]
        await model.ainvoke([SystemMessage(SYSTEM), *result.messages])  # accepted: no 400
        assert not stub.rejected
        assert is_summary(result.messages[0])
        assert "turn 0: never touch config/prod_0.yaml" in result.messages[0].content


async def test_extractive_result_passes_the_servers_message_rules():
    msgs = session()
    with OpenAIStub([{"status": 500, "error": {"message": "down"}}, {"content": "ok"}]) as stub:
        model = ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="x", max_retries=0)
        result = await compact_now(msgs, keep_users=1, model=model)
        assert result.committed and result.source == "extractive"
        dicts = [_convert_message_to_dict(m) for m in result.messages]
        assert history_problems(dicts) == []
        await model.ainvoke(list(result.messages))
        assert not stub.rejected
