"""The arguments checker: an identifier typed into a tool call must have come from somewhere."""

from __future__ import annotations

from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite
from checks.suite.evidence_index import CORRECTION_PREFIX

FLEET = {"jobs": [{"job": "nightly-tier2", "host": "ganymede", "host_id": 4417}]}


def findings(data: dict[str, Any], code: str, options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    result = run_suite(data, options)
    return [f for f in result["findings"] if f["checker"] == "arguments" and f["code"] == code]


def two_turns(args: dict[str, Any], result: Any = None, *, first_answer: str = "Done.", **kw: Any) -> dict:
    first = build_turn(first_answer, calls=[{"tool": "fleet_report", "result": FLEET}])
    second = build_turn(
        "Here is the status.",
        calls=[{"tool": "backup_status", "id": "call-9", "args": args, "result": result or {"absent": True}}],
        **kw,
    )
    return build_conversation(first, second)


def test_it_flags_an_identifier_assembled_from_nowhere() -> None:
    """4417-ganymede was never read (4417 and ganymede were, apart): flagged, with call and path."""
    (finding,) = findings(two_turns({"machine": "4417-ganymede"}), "unsupported_argument")
    assert (finding["turn"], finding["value"], finding["call_id"], finding["path"]) == (
        1,
        "4417-ganymede",
        "call-9",
        "machine",
    )
    assert finding["claim"] is None
    assert finding["severity"] == "flag"
    assert "nowhere" in finding["explanation"]


@pytest.mark.parametrize(
    ("user", "tool", "said", "guessed"),
    [
        ("We're moving out of a 2-bedroom apartment.", "get_move_quote", "apartment_2br", "apartment_3br"),
        ("I'd like the 10-visit pass for the pool.", "buy_pass", "visit_pass_10", "visit_pass_12"),
    ],
)
def test_an_options_name_of_words_writes_only_numbers_said_before(
    user: str, tool: str, said: str, guessed: str
) -> None:
    """An option named in words joined by underscores passes where each of its numbers was said
    before the call ("a 2-bedroom" for ``apartment_2br``); one with a number nobody said is flagged,
    and so is a code whose digits are long enough to be an identifier."""

    def asked(value: str) -> list[dict[str, Any]]:
        call = {"tool": tool, "args": {"option": value}, "result": {"ok": True}}
        return findings(
            build_conversation(build_turn("Here it is.", calls=[call], user=user)), "unsupported_argument"
        )

    assert asked(said) == []
    assert [f["value"] for f in asked(guessed)] == [guessed]
    assert [f["value"] for f in asked("order_48213")] == ["order_48213"]
    # A number a result holds far from any word of the name spells nothing: "items": 5 is no "5 days".
    late = {"tool": "get_order", "args": {"order": "A-1"}, "result": {"items": 5}}
    fee = {"tool": "settle_fee", "args": {"reason": "late_return_5_days"}, "result": {"ok": True}}
    turn = build_turn("Done.", calls=[late, fee], user="My order came back 2 days late.")
    assert [f["value"] for f in findings(build_conversation(turn), "unsupported_argument")] == [
        "late_return_5_days"
    ]


def test_it_says_when_the_value_was_found_only_in_the_assistants_prose() -> None:
    """A value the model wrote in its own earlier answer is not evidence, and the finding says so."""
    data = two_turns({"machine": "4417-ganymede"}, first_answer="That is machine 4417-ganymede.")
    (finding,) = findings(data, "unsupported_argument")
    assert finding["found_in"] == "assistant_prose"
    assert "assistant's own prose" in finding["explanation"]


def test_it_accepts_values_read_from_an_earlier_result_the_user_or_the_system_prompt() -> None:
    """nightly-tier2 came from a result; srv-0042 from the user; t-9931 from the system prompt."""
    assert findings(two_turns({"job": "nightly-tier2"}), "unsupported_argument") == []
    assert findings(two_turns({"machine": "srv-0042"}, user="Check srv-0042."), "unsupported_argument") == []
    data = two_turns({"tenant": "t-9931"})
    data["system"] = "Your tenant is t-9931."
    assert findings(data, "unsupported_argument") == []


def test_arguments_and_answers_are_grounded_by_one_policy() -> None:
    """One ``Grounds`` answers both checkers: a person's compound token supplies its pieces
    (a path the user typed supplies the id in it), the suite's own correction quoted back as
    a user message supplies nothing, and another call's query backs no argument while it
    backs what an answer restates of it."""
    typed = two_turns({"shelf": "shelf-7731"}, user="It is under stores/shelf-7731/bin-2.")
    assert findings(typed, "unsupported_argument") == []
    quoted = two_turns({"shelf": "shelf-7731"}, user=f"{CORRECTION_PREFIX} `shelf-7731` was read nowhere.")
    assert [f["value"] for f in findings(quoted, "unsupported_argument")] == ["shelf-7731"]
    first = build_turn(
        "Sample S-20931 is logged.",
        calls=[{"tool": "sample_find", "args": {"id": "S-20931"}, "result": {"status": "logged"}}],
        user="Find this morning's sample.",
    )
    second = build_turn(
        "Moved.", calls=[{"tool": "sample_move", "args": {"id": "S-20931", "to": "rack-5510"}, "result": {}}]
    )
    data = build_conversation(first, second)
    flagged = findings(data, "unsupported_argument")
    assert [(f["turn"], f["value"]) for f in flagged] == [(0, "s-20931"), (1, "s-20931"), (1, "rack-5510")]
    assert [f for f in run_suite(data)["findings"] if f["code"] == "unsupported_value"] == []


def test_a_result_that_comes_later_does_not_ground_an_earlier_call() -> None:
    """Only results before the call count: a value first seen afterwards was still typed."""
    first = build_turn(
        "ok",
        calls=[
            {"tool": "lookup", "id": "c1", "args": {"id": "srv-7001"}, "result": {"ok": True}},
            {"tool": "listing", "id": "c2", "result": {"ids": ["srv-7001"]}},
        ],
    )
    (finding,) = findings(build_conversation(first), "unsupported_argument")
    assert finding["call_id"] == "c1"


def test_it_never_flags_composed_text_or_prose_words() -> None:
    """A note to save, a message to send and a digit-free word are not identifiers."""
    args = {"text": "favourite tea: sencha, order 4417-x9 weekly", "status": "pending", "n": "12"}
    turn = build_turn("Saved.", calls=[{"tool": "memory_remember", "args": args, "result": {"ok": True}}])
    assert findings(build_conversation(turn), "unsupported_argument") == []


def test_it_checks_every_string_of_an_armed_tool() -> None:
    """Named in arguments_from, a tool's digit-free string argument of 4+ characters is checked."""
    options = {"arguments": {"arguments_from": {"backup_status": ["fleet_report"]}}}
    data = two_turns({"machine": "callisto"})
    (finding,) = findings(data, "unsupported_argument", options)
    assert finding["value"] == "callisto"
    assert findings(two_turns({"machine": "callisto"}), "unsupported_argument") == []
    assert findings(two_turns({"machine": "ganymede"}), "unsupported_argument", options) == []


def test_only_the_named_producers_results_count() -> None:
    """With producers named, a value another tool returned is unsupported."""
    first = build_turn("ok", calls=[{"tool": "inventory", "result": {"hosts": ["srv-5511"]}}])
    second = build_turn("ok", calls=[{"tool": "backup_status", "args": {"machine": "srv-5511"}}])
    data = build_conversation(first, second)
    assert findings(data, "unsupported_argument") == []
    options = {"arguments": {"arguments_from": {"backup_status": ["fleet_report"]}}}
    (finding,) = findings(data, "unsupported_argument", options)
    assert "fleet_report" in finding["explanation"]


def test_a_value_in_the_tools_declared_enum_passes() -> None:
    """tools_offered with a schema whose enum holds the value: nothing to flag."""
    schema = {"type": "object", "properties": {"tier": {"type": "string", "enum": ["tier-2", "tier-3"]}}}
    offered: Any = [{"name": "set_tier", "parameters": schema}]
    turn = build_turn("ok", calls=[{"tool": "set_tier", "args": {"tier": "tier-2"}}], offered=offered)
    assert findings(build_conversation(turn), "unsupported_argument") == []
    other = build_turn("ok", calls=[{"tool": "set_tier", "args": {"tier": "tier-9"}}], offered=offered)
    assert [f["value"] for f in findings(build_conversation(other), "unsupported_argument")] == ["tier-9"]


def test_it_names_nested_argument_paths() -> None:
    """An identifier deep in the arguments is reported at `filters.hosts[1]`."""
    args = {"filters": {"hosts": ["ganymede", "srv-8080"]}}
    turn = build_turn("ok", calls=[{"tool": "search", "args": args}])
    (finding,) = findings(build_conversation(turn), "unsupported_argument")
    assert finding["path"] == "filters.hosts[1]"


def test_invalid_argument_json_is_read_as_nothing_and_never_fails() -> None:
    """Arguments that are not JSON give no finding and no error."""
    data = build_conversation(build_turn("ok", calls=[{"tool": "search", "args": {}}]))
    data["turns"][0]["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"id": "srv-1'
    assert findings(data, "unsupported_argument") == []


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("find_logins", {"since": "2026-11-29"}),  # "since yesterday"
        ("list_invoices", {"month": "2026-10"}),  # "last month's invoices"
        ("search_tide_tables", {"period": "2027-03"}),  # "tides in March"
    ],
)
def test_a_computed_date_is_not_taken_for_an_identifier(tool: str, args: dict[str, str]) -> None:
    """A day or a month worked out from "yesterday" or "in March" is arithmetic on today, not a
    looked-up identifier, while a code of the same digits is checked."""
    turn = build_turn("ok", calls=[{"tool": tool, "args": args}])
    assert findings(build_conversation(turn), "unsupported_argument") == []
    coded = build_turn("ok", calls=[{"tool": tool, "args": {"batch": "B2026-10"}}])
    assert len(findings(build_conversation(coded), "unsupported_argument")) == 1


def test_it_reports_an_empty_lookup_of_a_value_another_tool_produced() -> None:
    """fleet_report produced nightly-tier2; backup_status looked it up and found nothing."""
    (finding,) = findings(two_turns({"job": "nightly-tier2"}), "empty_lookup")
    assert finding["severity"] == "info"
    assert finding["call_id"] == "call-9"
    assert finding["evidence"][0]["path"] == "jobs[0].job"


def test_no_empty_lookup_when_the_lookup_found_rows() -> None:
    """The same lookup answered with rows is simply a lookup."""
    data = two_turns({"job": "nightly-tier2"}, {"backups": [{"at": "02:14"}]})
    assert findings(data, "empty_lookup") == []


def test_no_empty_lookup_for_a_value_only_a_person_supplied() -> None:
    """A user's value that no tool produced was not produced by one tool for another."""
    data = two_turns({"machine": "srv-0042"}, user="Check srv-0042.")
    assert findings(data, "empty_lookup") == []


def test_empty_lookup_counts_only_named_producers() -> None:
    """With producers named, a value another tool returned gives no empty_lookup."""
    options = {"arguments": {"arguments_from": {"backup_status": ["inventory"]}}}
    data = two_turns({"job": "nightly-tier2"}, user="Check nightly-tier2.")
    assert findings(data, "empty_lookup", options) == []
    assert len(findings(data, "empty_lookup")) == 1


def test_a_long_invented_identifier_is_flagged_and_shown_cut_short() -> None:
    """Length makes no identifier prose: 600 characters typed from nowhere are invented. The
    explanation shows them cut with an ellipsis; the finding's value keeps them whole."""
    for tool, key, value in (
        ("attach_badge", "badge_token", "bdg-" + "7q" * 300),
        ("label_crate", "crate_code", "crt-" + "41k" * 200),
    ):
        turn = build_turn("Done.", calls=[{"tool": tool, "args": {key: value}, "result": {"ok": True}}])
        (finding,) = findings(build_conversation(turn), "unsupported_argument")
        assert finding["value"] == value
        assert value not in finding["explanation"]
        assert f"“{value[:20]}" in finding["explanation"] and "…”" in finding["explanation"]


@pytest.mark.parametrize(
    ("user", "result", "expression", "invented"),
    [
        # a ticket desk: four seats at the listed price, then a tax rate nobody gave
        (
            "Price 4 seats of show S-2 for me.",
            {"show": "S-2", "seat_price": 37.5},
            "4 * 37.5",
            "4 * 37.5 * 1.08",
        ),
        # an inventory: stock less what the user took out, then a shrink rate nobody gave
        (
            "I took 37 units of BOLT-6 out.",
            {"sku": "BOLT-6", "on_hand": 1250},
            "1250 - 37",
            "1250 * 0.93 - 37",
        ),
    ],
)
def test_a_number_of_an_expression_that_nobody_said_is_invented(
    user: str, result: dict[str, Any], expression: str, invented: str
) -> None:
    """Each number of a calculator's expression is a value: read from a result or said by the
    user, it passes; said by nobody, it is an unsupported argument, named in the finding."""

    def flagged(text: str) -> list[str | None]:
        calls = [
            {"tool": "lookup", "args": {"q": "x"}, "result": result},
            {"tool": "calculate", "args": {"expression": text}, "result": "0"},
        ]
        data = build_conversation(build_turn("Here it is.", calls=calls, user=user))
        return [f["value"] for f in findings(data, "unsupported_argument")]

    assert flagged(expression) == []
    assert flagged(invented) == [invented.split()[4 if "1.08" in invented else 2]]


@pytest.mark.parametrize(
    ("user", "result", "said", "made_up", "answer"),
    [
        # a ticket desk: the total for four seats, then with a tax rate nobody gave
        (
            "Price 4 seats of show S-2 for me.",
            {"seat_price": 37.5},
            ("4 * 37.5", "150"),
            ("4 * 37.5 * 1.08", "162"),
            "That is ${} in all.",
        ),
        # an inventory: stock less what the user took out, then with a shrink rate nobody gave
        (
            "I took 37 units of BOLT-6 out.",
            {"on_hand": 1250},
            ("1250 - 37", "1213"),
            ("1250 * 0.93 - 37", "1125.5"),
            "That leaves {} units.",
        ),
    ],
)
def test_what_a_made_up_operand_computed_backs_nothing_in_the_answer(
    user: str, result: dict[str, Any], said: tuple[str, str], made_up: tuple[str, str], answer: str
) -> None:
    """A calculator's result grounds the answer that repeats it only where every operand was said:
    computed with a made-up one, it backs nothing, and the answer's figure is unsupported, with the
    call named as the only place that writes it."""

    def answered(expression: str, value: str) -> list[dict[str, Any]]:
        calls = [
            {"tool": "lookup", "args": {"q": "x"}, "result": result},
            {"tool": "calculate", "id": "calc-1", "args": {"expression": expression}, "result": value},
        ]
        data = build_conversation(build_turn(answer.format(value), calls=calls, user=user))
        return [f for f in run_suite(data)["findings"] if f["code"] == "unsupported_value"]

    assert answered(*said) == []
    (finding,) = answered(*made_up)
    assert "only in the result of call calc-1" in finding["explanation"]


@pytest.mark.parametrize(
    ("user", "result", "expression", "value", "answer"),
    [
        # a ticket desk: the tax the user named, as the factor it makes
        (
            "Price 4 seats with the 8% sales tax.",
            {"seat_price": 37.5},
            "4 * 37.5 * 1.08",
            "162",
            "${} in all.",
        ),
        # a print farm: hours of run time in seconds, at a rate per hour
        ("What will job J-4 cost?", {"run_seconds": 45000, "rate": 84}, "45000 / 3600 * 84", "1050", "${}."),
        # a shop: the user's discount, as what is left to pay
        ("Price the rug with my 15% discount.", {"price": 1240}, "1240 * 0.85", "1054", "That is ${}."),
    ],
)
def test_a_constant_or_a_rate_as_its_factor_is_no_made_up_operand(
    user: str, result: dict[str, Any], expression: str, value: str, answer: str
) -> None:
    """A constant of the clock or a scale, and one plus or minus a percent the user said, are
    nobody's value to say: the expression is not flagged, and its result backs the answer."""
    calls = [
        {"tool": "lookup", "args": {"q": "x"}, "result": result},
        {"tool": "calculate", "args": {"expression": expression}, "result": value},
    ]
    data = build_conversation(build_turn(answer.format(value), calls=calls, user=user))
    assert [f["code"] for f in run_suite(data)["findings"] if f["severity"] == "flag"] == []


@pytest.mark.parametrize(
    ("tool", "args", "result", "flagged"),
    [
        # A seed catalogue: the slug spelled from "Brandywine tomatoes" is a variety the lookup found.
        (
            "get_variety",
            {"variety": "tomato_brandywine_01"},
            {"variety": "tomato_brandywine_01", "days": 85},
            False,
        ),
        # A rental desk: the quote's lines carry back the item codes it priced, in another case.
        (
            "lookup_prices",
            {"items": [{"code": "tent-20x40"}]},
            {"lines": [{"code": "TENT-20X40", "each": 640}]},
            False,
        ),
        # The same lookups failed, found nothing, or a write echoes what it was told: still invented.
        (
            "get_variety",
            {"variety": "tomato_brandywine_01"},
            "Error: variety tomato_brandywine_01 not found",
            True,
        ),
        (
            "get_variety",
            {"variety": "tomato_brandywine_01"},
            {"query": "tomato_brandywine_01", "matches": []},
            True,
        ),
        ("create_rental", {"code": "tent-20x40"}, {"code": "tent-20x40", "status": "booked"}, True),
        # A number nobody gave that happens to name a real order is still guessed.
        ("get_order", {"order": "ORD-55123"}, {"order": "ORD-55123", "status": "shipped"}, True),
    ],
)
def test_a_value_a_reads_own_result_carries_back_names_something_that_exists(
    tool: str, args: dict[str, Any], result: Any, flagged: bool
) -> None:
    """A read that found the name it was asked for shows the name exists, however the model spelled
    it from the user's words; a failed or empty read, a write's echo of its own arguments, or a
    guessed number (an order, an account) that happens to exist shows nothing of the kind."""
    turn = build_turn(
        "Here it is.", user="Please look it up.", calls=[{"tool": tool, "args": args, "result": result}]
    )
    assert bool(findings(build_conversation(turn), "unsupported_argument")) == flagged


@pytest.mark.parametrize(
    ("said", "typed", "other"),
    [
        ("TK20240815", "TK-2024-0815", "TK-2024-0816"),  # a ticket desk's ticket
        ("BIN/A7/0042", "BINA70042", "BINA70043"),  # a warehouse's bin
    ],
)
def test_a_code_the_user_wrote_with_other_marks_is_theirs(said: str, typed: str, other: str) -> None:
    """The marks between a code's parts are notation: the user's "TK20240815" supplies the
    argument "TK-2024-0815"; a code with another character is still invented."""
    for value, flagged in ((typed, False), (other, True)):
        turn = build_turn(
            "Here it is.",
            calls=[{"tool": "get_record", "args": {"code": value}, "result": {"absent": True}}],
            user=f"Please look up {said}.",
        )
        assert bool(findings(build_conversation(turn), "unsupported_argument")) is flagged
