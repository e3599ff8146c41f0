"""Validity: after every compaction tier, random histories still obey the chat message rules.

Generates N random valid histories (parallel tool calls, interleaved users, huge outputs, CJK
text, prior summaries), applies tier 2 (clear), tier 3 (summarize, keep 1-3 user turns,
extractive) and the emergency compaction, and checks each result with engram's validator and
with the OpenAI-compatible stub server's own rule check; a sample is also sent over HTTP
through ChatOpenAI (valid histories must get 200, deliberately broken ones 400).

Run: PYTHONPATH=. .venv/bin/python bench/compaction/bench_validity.py [N]
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time

import openai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import _convert_message_to_dict
from langgraph.graph import add_messages

from engram.graph.compaction import Request, clear_pass, compact_now, emergency_compact
from engram.graph.compaction._history_rules import validate_history
from tests.support.openai_stub import OpenAIStub, history_problems
from tests.unit.graph.history_strategies import histories

HTTP_SAMPLE_EVERY = 20


def stub_problems(messages) -> list[str]:
    return history_problems([_convert_message_to_dict(m) for m in messages])


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    rng = random.Random(7)
    stats = {
        "histories": 0,
        "results": 0,
        "invalid_engram": 0,
        "invalid_stub": 0,
        "committed": {"clear": 0, "summarize": 0, "emergency": 0},
        "messages": 0,
        "tool_results": 0,
        "max_chars": 0,
    }
    http_samples: list[list] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(histories(), st.integers(1, 3), st.integers(0, 4))
    def run(msgs, keep_users, keep_tools):
        stats["histories"] += 1
        stats["messages"] += len(msgs)
        stats["tool_results"] += sum(1 for m in msgs if m.type == "tool")
        stats["max_chars"] = max(stats["max_chars"], sum(len(str(m.content)) for m in msgs))
        assert not validate_history(msgs)
        results = [
            clear_pass(msgs, Request(), min_saving=1, keep_recent=keep_tools),
            asyncio.run(compact_now(msgs, keep_users=keep_users, min_drop=0.0)),
            emergency_compact(msgs),
        ]
        for result in results:
            new = add_messages(msgs, result.update()) if result.committed else msgs
            stats["results"] += 1
            stats["committed"][result.tier] += int(result.committed)
            stats["invalid_engram"] += int(bool(validate_history(new)))
            stats["invalid_stub"] += int(bool(stub_problems(new)))
        if stats["histories"] % HTTP_SAMPLE_EVERY == 0:
            http_samples.append(list(add_messages(msgs, results[1].update())))

    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    http = {"sent_valid": 0, "accepted": 0, "sent_broken": 0, "rejected_400": 0}
    with OpenAIStub(lambda body: {"content": "ok"}) as stub:
        model = ChatOpenAI(model="stub", base_url=stub.base_url, api_key="x", max_retries=0)
        for msgs in http_samples:
            request = [SystemMessage("system"), *msgs]
            http["sent_valid"] += 1
            model.invoke(request)
            http["accepted"] += 1
            calls = [i for i, m in enumerate(request) if isinstance(m, AIMessage) and m.tool_calls]
            if calls:
                i = rng.choice(calls)
                broken = request[: i + 1] + request[i + 2 :]  # drop one tool result
                http["sent_broken"] += 1
                try:
                    model.invoke(broken)
                except openai.BadRequestError:
                    http["rejected_400"] += 1
    report = {
        **stats,
        "seconds": round(elapsed, 1),
        "http": http,
        "valid_share_pct": round(
            100
            * (
                1
                - (stats["invalid_engram"] + stats["invalid_stub"]) / (2 * max(1, stats["results"]))
            ),
            2,
        ),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
