"""A conversation with findings of every kind, and the ways a huge number can be put in it.

The cases of the huge-number tests, shared by the suite's (``test_huge_numbers``) and the
service's (``tests/test_huge_number_runs.py``); a module of its own, with no imports but the
standard library's, so that both can import it. The conversation is the examples' turns one
after another (``demo/``): among them a failed write, and last a result that lists rows (two
clusters' used and total sizes) whose ratio the answer states.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "demo"
# The examples whose turns make the conversation, in this order.
TURNS_FROM = ("01", "04", "05", "07", "09", "10")
WRITE_TURN = 1  # example 04: a write, which failed
ROWS_TURN = 5  # example 10: rows, and the ratio of two of their columns

INTEGER = "1" + "0" * 399  # 400 digits
NEIGHBOUR = INTEGER[:-1] + "1"  # the same but for its last digit
FRACTION = "1" + "0" * 400 + ".5"
EXPONENT = "1e400"
PAST_THE_DOOR = "1" + "0" * 5000  # more digits than the door accepts of an integer in JSON

Key = tuple[int, str, str, str]  # a finding's turn, checker, code and value


def clipped(value: str) -> str:
    """A value as the evidence checker reports it: at most 64 characters."""
    return value if len(value) <= 64 else value[:63] + "…"


def conversation(external_id: str) -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    for name in TURNS_FROM:
        (path,) = EXAMPLES.glob(f"{name}_*.json")
        turns.extend(json.loads(path.read_text())["turns"])
    return {"external_id": external_id, "turns": turns}


def _in_rows(literal: str) -> Callable[[dict[str, Any]], None]:
    """Every row of the listed result gets a column holding ``literal``, as JSON writes it."""

    def change(data: dict[str, Any]) -> None:
        message = data["turns"][ROWS_TURN]["messages"][2]
        value = json.loads(message["content"])
        for row in value["clusters"]:
            row["files"] = "<number>"
        message["content"] = json.dumps(value).replace('"<number>"', literal)

    return change


def _in_answer(words: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["turns"][ROWS_TURN]["messages"][-1]["content"] += " " + words

    return change


def _in_user_words(words: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["turns"][ROWS_TURN]["messages"][0]["content"] += " " + words

    return change


def _in_write_arguments(literal: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        function = data["turns"][WRITE_TURN]["messages"][1]["tool_calls"][0]["function"]
        function["arguments"] = function["arguments"][:-1] + f', "copies": {literal}}}'

    return change


def _in_result_text(words: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        message = data["turns"][ROWS_TURN]["messages"][2]
        message["content"] = message["content"][:-1] + ', "note": ' + json.dumps(words) + "}"

    return change


@dataclass(frozen=True)
class Variant:
    """One way of putting a huge number in, and the findings it adds (about that number)."""

    name: str
    changes: tuple[Callable[[dict[str, Any]], None], ...]
    extra: frozenset[Key] = field(default_factory=frozenset)

    def apply(self, data: dict[str, Any]) -> dict[str, Any]:
        for change in self.changes:
            change(data)
        return data


VARIANTS = [
    Variant("an integer of 400 digits in rows", (_in_rows(INTEGER),)),
    Variant("a negative one in rows", (_in_rows("-" + INTEGER),)),
    Variant("a fraction of 400 digits in rows", (_in_rows(FRACTION),)),
    Variant("1e400 in rows", (_in_rows(EXPONENT),)),
    Variant("an integer past the door's digits in rows", (_in_rows(PAST_THE_DOOR),)),
    Variant("an integer of 400 digits in a result's text", (_in_result_text(f"counted {INTEGER} files"),)),
    Variant(
        "an integer of 400 digits in a write's arguments",
        (_in_write_arguments(INTEGER),),
        frozenset({(WRITE_TURN, "arguments", "unsupported_argument", INTEGER)}),
    ),
    Variant(
        "an integer of 400 digits in the answer",
        (_in_answer(f"They hold {INTEGER} files."),),
        frozenset({(ROWS_TURN, "evidence", "unsupported_value", clipped(INTEGER))}),
    ),
    Variant(
        "an integer in rows, and the answer saying it",
        (_in_rows(INTEGER), _in_answer(f"They hold {INTEGER} files each.")),
    ),
    Variant(
        "a fraction in rows, and the answer saying it",
        (_in_rows(FRACTION), _in_answer(f"They hold {FRACTION} files each.")),
    ),
    Variant(
        "an integer in rows, and the answer saying one that differs in its last digit",
        (_in_rows(INTEGER), _in_answer(f"They hold {NEIGHBOUR} files each.")),
        frozenset({(ROWS_TURN, "evidence", "unsupported_value", clipped(NEIGHBOUR))}),
    ),
    Variant(
        "an integer past the door's digits in the user's words",
        (_in_user_words(f"I keep {PAST_THE_DOOR} files."),),
    ),
    Variant(
        "an integer past the door's digits in the answer",
        (_in_answer(f"There are {PAST_THE_DOOR} files."),),
        frozenset({(ROWS_TURN, "evidence", "unsupported_value", clipped(PAST_THE_DOOR))}),
    ),
]
