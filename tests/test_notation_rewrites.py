"""The metamorphic harness's rewrites (tests/notation_rewrites.py), on made-up text.

Each rewrite writes the values it can read for sure in another notation, and nothing else:
a reader of its own here (any of the notations involved) finds the same values, in the same
order, before and after, and the text around them is the same byte for byte.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from tests.notation_rewrites import (
    BY_NAME,
    REWRITES,
    Edit,
    Flag,
    compare_flags,
    flags_of,
    map_back,
    rewrite_conversation,
    widen,
)

# --- an independent reader of every notation the rewrites use -----------------------------

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sept", "Sep"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_VALUE = re.compile(
    rf"(?P<md>(?P<m1>{_MONTH})\.? (?P<d1>\d+)(?:st|nd|rd|th)?,? (?P<y1>\d{{4}}))"
    rf"|(?P<dm>(?P<d2>\d+)(?:st|nd|rd|th)? (?:of )?(?P<m2>{_MONTH})\.?,? (?P<y2>\d{{4}}))"
    r"|(?P<iso>(?P<y3>\d{4})-(?P<m3>\d\d)-(?P<d3>\d\d))"
    r"|(?P<us>(?P<m4>\d{1,2})/(?P<d4>\d{1,2})/(?P<y4>\d{4}))"
    r"|(?P<usd>(?P<a1>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?) USD)"
    r"|(?P<dollar>\$(?P<a2>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?))"
    r"|(?P<t12>(?P<h1>\d{1,2}):(?P<n1>\d\d) (?P<ap>[AP]M))"
    r"|(?P<t24>(?P<h2>\d{1,2}):(?P<n2>\d\d))"
)


def _value(match: re.Match[str]) -> object:
    if match["md"] or match["dm"]:
        which = "1" if match["md"] else "2"
        return date(int(match["y" + which]), _MONTHS[match["m" + which]], int(match["d" + which]))
    if match["iso"]:
        return date(int(match["y3"]), int(match["m3"]), int(match["d3"]))
    if match["us"]:
        return date(int(match["y4"]), int(match["m4"]), int(match["d4"]))
    if match["usd"] or match["dollar"]:
        return ("USD", Decimal((match["a1"] or match["a2"]).replace(",", "")))
    if match["t12"]:
        hour = int(match["h1"]) % 12 + (12 if match["ap"] == "PM" else 0)
        return ("time", hour, int(match["n1"]))
    return ("time", int(match["h2"]), int(match["n2"]))


def read(text: str) -> tuple[list[object], str]:
    """The values of a text, and the text around them (each value a placeholder)."""
    values: list[object] = []

    def keep(match: re.Match[str]) -> str:
        try:
            values.append(_value(match))
        except ValueError:  # not a date after all ("February 30"): words, left as they are
            return match.group()
        return "\0"

    return values, _VALUE.sub(keep, text)


def assert_value_preserving(name: str, text: str) -> None:
    rewritten = BY_NAME[name].text(text)
    assert read(rewritten.text) == read(text)
    for edit in rewritten.edits:
        assert read(text[edit.start : edit.end])[0] == read(rewritten.text[edit.new_start : edit.new_end])[0]


# --- each rewrite: what it rewrites, what it leaves ---------------------------------------

CASES: list[tuple[str, str, str]] = [
    # (rewrite, text, expected)
    (
        "iso_date_to_written",
        "The library loan is due 2031-02-03; renew it by 2031-01-30 (or 2032-12-31).",
        "The library loan is due February 3, 2031; renew it by January 30, 2031 (or December 31, 2032).",
    ),
    (
        "iso_date_to_slashed",
        "Sample 7 was drawn on 2029-11-08 and re-tested on 2029-12-01.",
        "Sample 7 was drawn on 11/8/2029 and re-tested on 12/1/2029.",
    ),
    (
        "written_date_to_iso",
        "The observatory opens on March 3, 2030 and closes on Sept. 14th, 2030; the survey ran "
        "from Thursday, 2 May 2030 to the 21st of June, 2030 and Dec 1 2030.",
        "The observatory opens on 2030-03-03 and closes on 2030-09-14; the survey ran "
        "from Thursday, 2030-05-02 to the 2030-06-21 and 2030-12-01.",
    ),
    (
        "dollar_sign_to_usd",
        "Seeds cost $4.50 a packet or $1,200 for the lot (a credit of -$3 and +$0.05 apply).",
        "Seeds cost 4.50 USD a packet or 1,200 USD for the lot (a credit of -3 USD and +0.05 USD apply).",
    ),
    (
        "dollars_add_grouping_and_cents",
        "The grant is $1000, the match $1234567, a stamp $0.5 and the fee $2,500.75.",
        "The grant is $1,000.00, the match $1,234,567.00, a stamp $0.50 and the fee $2,500.75.",
    ),
    (
        "dollars_drop_grouping_and_cents",
        "Tuition: $12,400.00, books $1,234.56, a pencil $0.00 and a pen $7.50.",
        "Tuition: $12400, books $1234.56, a pencil $0 and a pen $7.50.",
    ),
    (
        "clock_24h_to_12h",
        "The ferry leaves at 22:00, the night bus at 00:15 and the lab is open 13:30-17:45 CET.",
        "The ferry leaves at 10:00 PM, the night bus at 12:15 AM and the lab is open 1:30 PM-5:45 PM CET.",
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[case[0] for case in CASES])
def test_it_rewrites_the_values_it_reads(name: str, text: str, expected: str) -> None:
    assert BY_NAME[name].text(text).text == expected
    assert_value_preserving(name, text)


UNREAD: dict[str, list[str]] = {
    # Text each rewrite must leave byte for byte: the value is doubtful, is another value
    # (part of an id, a timestamp, a scale word after it), or is already in the target form.
    "iso_date_to_written": [
        "Build 2031-02-30 failed.",  # no such day
        "Ticket REQ-2031-02-03 and file /logs/2031-02-03/app.log",
        "Stamped 2031-02-03T10:00:00Z, or 2031-02-03 10:00.",
        "Tag 2031-02-03-rc1 and v1.2031-02-03",
        "Already written: February 3, 2031.",
    ],
    "iso_date_to_slashed": ["Build 2031-13-01 failed.", "Stamped 2031-02-03T10:00:00Z."],
    "written_date_to_iso": [
        "We may 5, 2030 units",  # lower case: "may" is a verb as often as a month
        "On February 30, 2030 nothing happened.",
        "May 2th, 2030 is a slip.",
        "March 3 has no year; May. 3, 2030 is no abbreviation.",
        "Order May 19, 20301 is no date.",
        "Already ISO: 2030-03-03.",
    ],
    "dollar_sign_to_usd": [
        "Budgets of US$5, C$12 and HK$9.",
        "Revenue was $5 million, then $7M and $3k; grants run $5-10 each.",
        "Priced $5 USD already, or 12 dollars.",
        "echo $HOME costs \\$5, and in LaTeX $5$ is math.",
        "Malformed: $1,00 and $12.5.3.",
    ],
    "dollars_add_grouping_and_cents": ["A rate of $0.125 a unit.", "Already $1,000.00 and $7.50."],
    "dollars_drop_grouping_and_cents": ["A pen is $7.50 and a stamp $0.55.", "Already $1000."],
    "clock_24h_to_12h": [
        "Meet at 09:00 or 12:30; the sign says 9:30.",  # the same on a 12-hour clock, or doubtful
        "The log reads 22:00:00 and 2031-02-03T22:00.",
        "Already 10:00 PM and 11:15 pm.",
        "Read Genesis 14:15 and verses 14:15-17.",
        "Invalid 24:00 and 22:61, a version 1.14:30.",
    ],
}


@pytest.mark.parametrize(("name", "text"), [(name, text) for name, texts in UNREAD.items() for text in texts])
def test_it_leaves_what_it_cannot_read_for_sure(name: str, text: str) -> None:
    rewritten = BY_NAME[name].text(text)
    assert rewritten.text == text
    assert rewritten.edits == ()


def test_every_rewrite_has_cases() -> None:
    assert {case[0] for case in CASES} == set(BY_NAME) == set(UNREAD)
    assert len(BY_NAME) == len(REWRITES)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_it_preserves_values_in_mixed_text(name: str) -> None:
    """Every notation side by side, rewritten by each rewrite: the values read the same."""
    text = (
        "Shipment 2028-07-04 (July 4, 2028, 7/4/2028) weighed in at $1,250.00 = 1250 USD, "
        "left at 21:05, landed 9:40 PM on 3 Aug 2028; deposit $80, balance $1170.5."
    )
    assert_value_preserving(name, text)


def test_edits_name_the_spans_they_rewrote() -> None:
    text = "From 2031-02-03 to 2031-12-25."
    rewritten = BY_NAME["iso_date_to_written"].text(text)
    assert [(text[e.start : e.end], rewritten.text[e.new_start : e.new_end]) for e in rewritten.edits] == [
        ("2031-02-03", "February 3, 2031"),
        ("2031-12-25", "December 25, 2031"),
    ]


# --- conversations: only user and assistant text changes ----------------------------------


def _conversation() -> dict[str, Any]:
    return {
        "external_id": "garden-1",
        "system": "Today is 2030-04-01. Plots cost $40.",
        "messages": [
            {"role": "user", "content": "Book plot 7 for 2030-04-10 at 14:00, budget $1000."},
            {
                "role": "assistant",
                "content": "Checking 2030-04-10.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "reserve", "arguments": '{"day": "2030-04-10", "at": "14:00"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"day": "2030-04-10", "price": "$40"}'},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Booked"},
                    {"type": "image"},
                    {"type": "text", "text": "for 2030-04-10 at 14:00: $40."},
                ],
            },
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You're welcome."},
        ],
    }


def test_a_conversation_is_rewritten_in_user_and_assistant_text_only() -> None:
    original = _conversation()
    rewritten = rewrite_conversation(original, BY_NAME["iso_date_to_written"])
    messages = rewritten.conversation["messages"]
    assert messages[0]["content"] == "Book plot 7 for April 10, 2030 at 14:00, budget $1000."
    assert messages[1]["content"] == "Checking April 10, 2030."
    assert messages[1]["tool_calls"] == original["messages"][1]["tool_calls"]
    assert messages[2] == original["messages"][2]
    assert messages[3]["content"][2]["text"] == "for April 10, 2030 at 14:00: $40."
    assert rewritten.conversation["system"] == original["system"]
    assert original == _conversation()  # the original is left as it was
    assert (rewritten.values, rewritten.answers_changed) == (3, 1)


def test_a_rewrite_is_a_named_function_of_a_conversation() -> None:
    rewrite = BY_NAME["clock_24h_to_12h"]
    assert rewrite.name == "clock_24h_to_12h"
    assert rewrite(_conversation())["messages"][0]["content"] == (
        "Book plot 7 for 2030-04-10 at 2:00 PM, budget $1000."
    )


def test_answer_edits_are_in_the_offsets_of_the_answers_joined_text() -> None:
    """A list's text parts are joined by newlines (the contract), as findings count them."""
    rewritten = rewrite_conversation(_conversation(), BY_NAME["dollars_add_grouping_and_cents"])
    (edit,) = rewritten.answer_edits[0]
    before = "Booked\nfor 2030-04-10 at 14:00: $40."
    after = "Booked\nfor 2030-04-10 at 14:00: $40.00."
    assert (before[edit.start : edit.end], after[edit.new_start : edit.new_end]) == ("$40", "$40.00")
    assert 1 not in rewritten.answer_edits  # the second turn's answer has no value


# --- pairing the flags of two runs --------------------------------------------------------


def test_a_span_maps_back_through_the_edits() -> None:
    # "On 2031-02-03 paid $5." -> "On February 3, 2031 paid $5.00."
    edits = [Edit(3, 13, 3, 19), Edit(19, 21, 25, 30)]
    assert map_back(3, 19, edits) == (3, 13)  # the whole rewritten date
    assert map_back(3, 11, edits) == (3, 13)  # part of it: all of the value it was written from
    assert map_back(25, 30, edits) == (19, 21)
    assert map_back(20, 24, edits) == (14, 18)  # " paid" between the two
    assert map_back(0, 2, edits) == (0, 2)


def test_an_original_span_widens_to_the_values_it_cuts() -> None:
    edits = [Edit(3, 13, 3, 19)]
    assert widen(8, 13, edits) == (3, 13)
    assert widen(0, 5, edits) == (0, 13)
    assert widen(3, 13, edits) == (3, 13)
    assert widen(14, 20, edits) == (14, 20)


def _report(external_id: str, *findings: dict[str, Any]) -> dict[str, Any]:
    return {"external_id": external_id, "findings": list(findings)}


def _flag(
    turn: int, start: int | None, end: int | None, text: str = "x", code: str = "unsupported_value"
) -> dict[str, Any]:
    claim = None if start is None else {"text": text, "start": start, "end": end}
    return {"turn": turn, "checker": "evidence", "code": code, "severity": "flag", "claim": claim}


def test_a_flag_on_a_rewritten_value_pairs_with_the_original_flag() -> None:
    before = flags_of(_report("c", _flag(0, 3, 13, "2031-02-03")))
    after = flags_of(
        _report("c", _flag(0, 3, 19, "February 3, 2031")), {0: (Edit(3, 13, 3, 19),)}, rewritten=True
    )
    assert compare_flags(before, after).unchanged


def test_a_flag_on_part_of_a_value_pairs_with_one_on_part_of_its_rewriting() -> None:
    """ "16.63" of "$16.63" and "16.63" of "16.63 USD" both stand for the whole "$16.63"."""
    edits = {0: (Edit(5, 11, 5, 14),)}  # "Paid $16.63." -> "Paid 16.63 USD."
    before = flags_of(_report("c", _flag(0, 6, 11, "16.63")), edits)
    after = flags_of(_report("c", _flag(0, 5, 10, "16.63")), edits, rewritten=True)
    assert [flag.anchor for flag in before] == [flag.anchor for flag in after] == [("answer", 5, 11)]


def test_a_flag_read_a_little_wider_or_narrower_pairs_by_overlap() -> None:
    before = flags_of(_report("c", _flag(0, 10, 15, "$1000")))
    after = flags_of(_report("c", _flag(0, 11, 16, "1,000")))  # no edit covers it: shifted reading
    assert compare_flags(before, after).unchanged


def test_flags_elsewhere_are_added_or_removed() -> None:
    before = flags_of(
        _report("c", _flag(0, 0, 4), _flag(1, 0, 4), _flag(1, None, None, code="unverified_action"))
    )
    after = flags_of(
        _report("c", _flag(0, 0, 4), _flag(0, 20, 24), _flag(1, None, None, code="unverified_action"))
    )
    changes = compare_flags(before, after)
    assert [(f.turn, f.anchor) for f in changes.added] == [(0, ("answer", 20, 24))]
    assert [(f.turn, f.anchor) for f in changes.removed] == [(1, ("answer", 0, 4))]


def test_flags_pair_once_each() -> None:
    before = flags_of(_report("c", _flag(0, 0, 4)))
    after = flags_of(_report("c", _flag(0, 0, 4), _flag(0, 0, 4)))
    changes = compare_flags(before, after)
    assert (len(changes.added), len(changes.removed)) == (1, 0)


def test_an_argument_flag_pairs_by_its_call_and_path() -> None:
    finding = {
        "turn": 2,
        "checker": "arguments",
        "code": "unsupported_argument",
        "severity": "flag",
        "claim": None,
        "call_id": "c1",
        "path": "day",
    }
    other = dict(finding, path="at")
    assert compare_flags(flags_of(_report("c", finding)), flags_of(_report("c", finding))).unchanged
    changes = compare_flags(flags_of(_report("c", finding)), flags_of(_report("c", other)))
    assert (len(changes.added), len(changes.removed)) == (1, 1)


def test_info_findings_are_not_flags() -> None:
    assert flags_of(_report("c", dict(_flag(0, 0, 4), severity="info"))) == []


def test_flags_compare_without_their_findings_text() -> None:
    a = Flag("c", 0, "evidence", "unsupported_value", ("answer", 0, 4), {"claim": {"text": "$5"}})
    b = Flag("c", 0, "evidence", "unsupported_value", ("answer", 0, 4), {"claim": {"text": "5 USD"}})
    assert a == b
