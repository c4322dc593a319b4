"""The suite's work grows with a conversation's length, not with its square.

Each checker walks the turns once and asks what came before from indexes it grows as it
goes (``shown``, ``record``, the receipts' history); a checker that walked back through every
earlier turn at each turn made a 40,000-turn conversation hold a worker for over twenty
minutes. Work is counted in function calls, which do not depend on the machine's load: the
same block of turns repeated four times as often must cost four times as much.
"""

from __future__ import annotations

import cProfile
from typing import Any

from suite_helpers import build_turn

from checks.suite import run_suite

ORDERS = [{"order_id": f"ORD-{i:04d}", "status": "open", "total": 100 + i} for i in range(3)]


def _block() -> list[dict[str, Any]]:
    """Three turns that reach every checker's look back: a counted list read, a tool named,
    a change "has been" made, a stated absence, numbers typed into a write, a total, a date
    moved by days the user gave, and "Done!"."""
    return [
        build_turn(
            "I found 3 orders; ORD-0001 is open. I searched the search_orders tool.",
            calls=[{"tool": "search_orders", "args": {"customer": "Ada"}, "result": {"orders": ORDERS}}],
            user="Which orders does Ada have? Move it 2 days later.",
        ),
        build_turn(
            "Your order ORD-0001 has been cancelled. No refunds were found.",
            calls=[
                {"tool": "cancel_order", "args": {"order_id": "ORD-0001", "bags": 2}, "result": {"ok": True}}
            ],
            user="Cancel ORD-0001 with 2 bags, please.",
        ),
        build_turn("The total is $306, and 2024-05-20 works. Done!", user="What is the total for 3 people?"),
    ]


def _conversation(repeats: int) -> dict[str, Any]:
    turns = []
    for k in range(repeats):
        for turn in _block():
            for message in turn["messages"]:
                for call in message.get("tool_calls") or []:
                    call["id"] = f"k{k}-{call['id']}"
                if message.get("tool_call_id"):
                    message["tool_call_id"] = f"k{k}-{message['tool_call_id']}"
            turns.append(turn)
    return {"external_id": "long", "receipts_complete": False, "turns": turns}


def _calls(repeats: int) -> int:
    data = _conversation(repeats)
    profile = cProfile.Profile()
    profile.enable()
    run_suite(data)
    profile.disable()
    return sum(entry.callcount for entry in profile.getstats())


def test_four_times_the_turns_cost_four_times_the_work() -> None:
    small, large = _calls(40), _calls(160)
    assert large / small < 4.4, f"{small} calls for 120 turns, {large} for 480 ({large / small:.1f}x)"
