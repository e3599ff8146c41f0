"""Node confirm_task: decision parsing and the update each decision produces."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from engram.graph import Context, Deps, State
from engram.nodes import confirm_task
from engram.nodes._confirm_task import confirmation_request, parse_decision


@pytest.mark.parametrize(
    ("answer", "action", "constraints"),
    [
        ({"action": "approve"}, "approve", ""),
        ({"action": "reject"}, "reject", ""),
        (
            {"action": "constrain", "constraints": "no schema changes"},
            "constrain",
            "no schema changes",
        ),
        ({"constraints": "staging only"}, "constrain", "staging only"),
        ({"action": "approve", "constraints": "staging only"}, "constrain", "staging only"),
        ("y", "approve", ""),
        ("NO", "reject", ""),
        (True, "approve", ""),
        ("only touch staging", "constrain", "only touch staging"),
    ],
)
def test_parse_decision(answer, action, constraints):
    decision = parse_decision(answer)
    assert decision["action"] == action
    assert decision["constraints"] == constraints
    assert decision["approved"] is (action != "reject")


@pytest.mark.parametrize("answer", [{"action": "maybe"}, {"action": "constrain"}, ""])
def test_parse_decision_rejects_nonsense(answer):
    with pytest.raises(ValueError):
        parse_decision(answer)


def test_request_shows_profile_and_warnings():
    state = State(
        task="Deploy",
        task_profile={"risk": "high"},
        memory_block="block",
        memory_report={
            "experience": {
                "injected": [{"kind": "strategy", "id": "s"}, {"kind": "pattern", "id": "p"}]
            }
        },
    )
    request = confirmation_request(state)
    assert request["profile"] == {"risk": "high"}
    assert request["warnings"] == [{"kind": "pattern", "id": "p"}]
    assert request["actions"] == ["approve", "reject", "constrain"]


async def test_auto_approve_skips_the_interrupt():
    runtime = Runtime(context=Context(auto_approve=True))
    out = await confirm_task(State(task="x"), runtime, deps=Deps())
    assert out["approval"]["approved"] is True
