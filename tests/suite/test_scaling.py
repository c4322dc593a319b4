"""The suite's work grows with a conversation's length, not with its square, and with an
answer's length, not with its square.

Each checker walks the turns once and asks what came before from indexes it grows as it
goes (``shown``, ``record``, the receipts' history); a checker that walked back through every
earlier turn at each turn made a 40,000-turn conversation hold a worker for over twenty
minutes. Work is counted in function calls, which do not depend on the machine's load: the
same block of turns repeated four times as often must cost four times as much, and so must
an answer that says the same claim four times as often (``bench/input_limits.py`` shows the
time).
"""

from __future__ import annotations

import cProfile
from typing import Any

import pytest
from suite_helpers import build_turn

from checks.suite import run_suite
from checks.suite.text import MAX_SENTENCE, sentence_at, sentences

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


# Answers that repeat one claim without end: a report of an action, a stated absence, a
# count, a state, with and without sentence ends between them. Each of them once made every
# claim reread the sentence before it, or every claim kept before it.
REPEATED = [
    "I've saved ",
    "no results ",
    "I've saved it. ",
    "No results were found. ",
    "I found 3 orders ",
    "There are no matching records ",
    "the search returned 5 results ",
    "I searched everything and nothing matched ",
]


def _answer_calls(answer: str) -> int:
    data = {
        "external_id": "long-answer",
        "turns": [
            build_turn(
                answer,
                calls=[{"tool": "search_orders", "args": {"q": "open"}, "result": {"orders": ORDERS}}],
                user="Find my orders and save them.",
            )
        ],
    }
    profile = cProfile.Profile()
    profile.enable()
    run_suite(data)
    profile.disable()
    return sum(entry.callcount for entry in profile.getstats())


# And answers that state different values without end, each one to weigh on its own.
DISTINCT = {
    "amounts": lambda i: f"${i}.{i % 100:02d} ",
    "amounts in sentences": lambda i: f"The fee is ${i}.50 and the total is ${2 * i + 1}. ",
    "counts": lambda i: f"I found {i} orders. ",
}


def _distinct(name: str, length: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < length:
        parts.append(DISTINCT[name](len(parts)))
    return "".join(parts)


@pytest.mark.parametrize("phrase", REPEATED)
def test_four_times_the_answer_costs_four_times_the_work(phrase: str) -> None:
    small, large = (
        _answer_calls(phrase * (8000 // len(phrase))),
        _answer_calls(phrase * (32000 // len(phrase))),
    )
    assert large / small < 4.4, (
        f"{small} calls for 8,000 characters, {large} for 32,000 ({large / small:.1f}x)"
    )


@pytest.mark.parametrize("name", DISTINCT)
def test_four_times_as_many_values_cost_four_times_the_work(name: str) -> None:
    small, large = _answer_calls(_distinct(name, 8000)), _answer_calls(_distinct(name, 32000))
    assert large / small < 4.4, (
        f"{small} calls for 8,000 characters, {large} for 32,000 ({large / small:.1f}x)"
    )


def test_no_sentence_is_read_longer_than_the_limit() -> None:
    """Work inside a sentence is bounded by its length, and so per claim: a run of text with
    no sentence end is read in pieces, cut at spaces, none lost."""
    text = ("word " * 700) + "end. " + ("x" * 2500) + " tail"
    parts = sentences(text)
    assert all(len(part.text) <= MAX_SENTENCE for part in parts)
    assert all(text[part.start : part.end] == part.text for part in parts)
    # Cut at a space where there is one: every word stays whole.
    assert all(part.text.rstrip().endswith("word") for part in parts[:3])
    assert "".join(text[part.start : part.end] for part in parts).replace(" ", "") == text.replace(" ", "")
    for offset in (0, 1999, 3500, len(text) - 1):
        assert sentence_at(parts, offset) == next(p for p in parts if p.start <= offset < p.end)
