"""Retention and cache stability over a scripted 150-turn session through the stub model.

Retention: after every committed summary (extractive fallback: the stub answers summary
requests without the required sections), which planted needles appear verbatim in the model's
next request. Cache stability: the share of each request's bytes (tools + messages JSON) equal
to a prefix of the previous request, within a turn and across turns (pairs with a compaction
or clearing in between excluded), compared with the same requests rewritten so that the
per-turn memory block sits in the system prompt instead of the user turn.

Run: PYTHONPATH=. .venv/bin/python bench/compaction/bench_session.py [TURNS] [WINDOW] [full|local]
"""

from __future__ import annotations

import asyncio
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from bench.compaction.session import (
    TURN,
    FastStub,
    Script,
    body_text,
    common_prefix,
    compile_graph,
    context_for,
    is_summary_request,
    make_project,
    memory_text,
    plant,
    user_text,
)
from engram.graph import render_turn_context
from tests.support.openai_stub import _canonical

CONTEXT_SEP = "\n\n"


def turn_of(body: dict[str, Any]) -> int:
    users = [m for m in body["messages"] if m["role"] == "user" and TURN.search(str(m["content"]))]
    return int(TURN.search(str(users[-1]["content"])).group(1))


def memory_in_system(body: dict[str, Any]) -> dict[str, Any]:
    """The same request as if the turn's dynamic context sat in the system prompt instead.

    Every "[engram context]" block (memory, code context) is removed from the user messages and
    the current turn's block is appended to the system prompt; with the local wiring, whose
    memory is synthetic, the turn's memory text is used.
    """
    out = copy.deepcopy(body)
    turn = turn_of(body)
    current = render_turn_context(memory_text(turn))
    for message in out["messages"]:
        if message["role"] == "user" and isinstance(message["content"], str):
            head, sep, block = message["content"].partition(CONTEXT_SEP)
            if sep:
                message["content"] = head
                if TURN.search(head) and int(TURN.search(head).group(1)) == turn:
                    current = block if block.startswith("[engram context]") else current
    system = out["messages"][0]
    system["content"] = f"{system['content']}{CONTEXT_SEP}{current}"
    return out


def shares(bodies: list[dict[str, Any]], boundaries: set[int]) -> dict[str, list[tuple[int, int]]]:
    """(shared prefix bytes, request bytes) per consecutive pair, within and across turns."""
    out: dict[str, list[tuple[int, int]]] = {"within": [], "across": []}
    for i in range(1, len(bodies)):
        if i in boundaries:
            continue
        prev, cur = _canonical(bodies[i - 1]), _canonical(bodies[i])
        kind = "within" if turn_of(bodies[i]) == turn_of(bodies[i - 1]) else "across"
        out[kind].append((common_prefix(prev, cur), len(cur)))
    return out


def summarize_shares(pairs: list[tuple[int, int]]) -> dict[str, float]:
    if not pairs:
        return {}
    values = sorted(p / n for p, n in pairs)
    return {
        "pairs": len(values),
        "byte_weighted_pct": round(100 * sum(p for p, _ in pairs) / sum(n for _, n in pairs), 1),
        "mean_pct": round(100 * statistics.fmean(values), 1),
        "p10_pct": round(100 * values[len(values) // 10], 1),
        "min_pct": round(100 * values[0], 1),
    }


async def run(turns: int, window: int) -> dict[str, Any]:
    needles = plant(turns)
    script = Script(needles)
    with tempfile.TemporaryDirectory() as tmp, FastStub(script) as stub:
        root, home = Path(tmp) / "project", Path(tmp) / "home"
        make_project(root, needles)
        context = context_for(root, home, stub.base_url, window)
        graph, wiring = compile_graph(prefer_full=WIRING != "local")
        config = {"configurable": {"thread_id": "bench"}}
        events: list[tuple[int, dict[str, Any]]] = []  # (main requests so far, event)
        main_before: list[int] = []
        start = time.perf_counter()
        for turn in range(1, turns + 1):
            payload: dict[str, Any] = {"messages": [HumanMessage(user_text(turn, needles))]}
            if wiring.startswith("local"):
                payload["memory_block"] = memory_text(turn)
            async for update in graph.astream(
                payload, config, context=context, stream_mode="updates"
            ):
                for node, delta in update.items():
                    for event in (delta or {}).get("compaction_log", []) or []:
                        mains = sum(1 for b in stub.requests if not is_summary_request(b))
                        events.append((mains, {**event, "node": node, "turn": turn}))
            main_before.append(turn)
        elapsed = time.perf_counter() - start
        requests = [b for b in stub.requests if not is_summary_request(b)]
        state = (await graph.aget_state(config)).values
    committed = [(i, e) for i, e in events if e["status"] == "committed"]
    boundaries = {i for i, _ in committed}
    retention = []
    for index, event in committed:
        if event["tier"] == "clear" or index >= len(requests):
            continue
        text = body_text(requests[index])
        before = [n for n in needles if n.turn < event["turn"]]
        kept = [n for n in before if n.text in text]
        constraints = [n for n in before if n.kind == "constraint"]
        retention.append(
            {
                "turn": event["turn"],
                "source": event["source"],
                "planted": len(before),
                "kept": len(kept),
                "constraints_kept": f"{sum(n.text in text for n in constraints)}/{len(constraints)}",
            }
        )
    final_text = body_text(requests[-1])
    by_kind: dict[str, str] = {}
    for kind in ("constraint", "path", "decision", "error"):
        group = [n for n in needles if n.kind == kind]
        by_kind[kind] = f"{sum(n.text in final_text for n in group)}/{len(group)}"
    ours = shares(requests, boundaries)
    alt = shares([memory_in_system(b) for b in requests], boundaries)
    usage = state.get("usage", {})
    worst = min((r["kept"] / r["planted"] for r in retention if r["planted"]), default=None)
    return {
        "wiring": wiring,
        "turns": turns,
        "window": window,
        "seconds": round(elapsed, 1),
        "model_requests": len(requests),
        "summary_requests": script.summary_requests,
        "compactions": {
            tier: sum(1 for _, e in committed if e["tier"] == tier)
            for tier in ("clear", "summarize", "emergency")
        },
        "rolled_back": sum(1 for _, e in events if e["status"] != "committed"),
        "retention_after_each_summary": retention,
        "worst_retention_pct": round(100 * worst, 1) if worst is not None else None,
        "final_request_needles": by_kind,
        "final_request_needles_total": f"{sum(n.text in final_text for n in needles)}/30",
        "cache_prefix_share": {
            "memory_in_user_turn (engram)": {k: summarize_shares(v) for k, v in ours.items()},
            "memory_in_system_prompt": {k: summarize_shares(v) for k, v in alt.items()},
        },
        "usage": usage,
        "cache_hit_rate_pct": round(
            100 * usage.get("cache_read", 0) / max(1, usage.get("input", 0)), 1
        ),
    }


WIRING = "full"


def main() -> None:
    global WIRING
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 32_000
    WIRING = sys.argv[3] if len(sys.argv) > 3 else "full"
    print(json.dumps(asyncio.run(run(turns, window)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
