"""Numbers typed into a call that changes data must be supplied (amendment 1.1, "Arguments")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.suite import run_suite

ORDER = {"order_id": "ORD-4471", "items": [{"sku": "TEA-01", "quantity": 2, "price": 12}], "total": 24}


def conversation(
    user: str,
    calls: list[tuple[str, dict[str, Any], Any]],
    answers: list[str] = (),
    *,
    system: str = "",
    asked: str = "",
) -> Any:
    """The user's message, then each call with its result, then the answer; ``asked`` is an
    earlier turn's question the user's message answers, ``system`` the prompt."""
    messages: list[dict[str, Any]] = []
    if asked:
        messages += [{"role": "user", "content": "Hello."}, {"role": "assistant", "content": asked}]
    messages.append({"role": "user", "content": user})
    for text in answers:
        messages.append({"role": "assistant", "content": text})
    for i, (tool, args, result) in enumerate(calls, start=1):
        call = {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(result)})
    messages.append({"role": "assistant", "content": "Done as asked."})
    data = {"external_id": "t-1", "system": system, "messages": messages}
    return run_suite(data, only={"arguments"})


def unsupported(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["path"], f["value"]) for f in result["findings"] if f["code"] == "unsupported_argument"]


def test_a_count_nobody_gave_in_a_write_is_flagged_and_names_call_path_and_value() -> None:
    """The user asked for tea, never for three boxes: `quantity` 3 is invented."""
    result = conversation(
        "Please order the TEA-01 tea for me.",
        [("create_order", {"sku": "TEA-01", "quantity": 3}, {"ok": True})],
    )
    assert unsupported(result) == [("quantity", "3")]
    [finding] = result["findings"]
    assert "The argument quantity of create_order (call c1)" in finding["explanation"]
    assert "`" not in finding["explanation"]  # people read it: no markdown quoting


def test_a_count_the_user_said_of_that_noun_is_supplied() -> None:
    """ "three boxes of TEA-01" supplies quantity 3 of box... and of what the key counts."""
    result = conversation(
        "Please order 3 boxes of the TEA-01 tea.",
        [("create_order", {"sku": "TEA-01", "boxes": 3}, {"ok": True})],
    )
    assert unsupported(result) == []
    words = conversation(
        "Please order three boxes of TEA-01.", [("create_order", {"sku": "TEA-01", "boxes": 3}, {"ok": True})]
    )
    assert unsupported(words) == []


def test_a_number_the_user_said_of_another_noun_does_not_supply_it() -> None:
    """ "3 days" is not 3 boxes."""
    result = conversation(
        "Deliver TEA-01 within 3 days please.",
        [("create_order", {"sku": "TEA-01", "boxes": 3}, {"ok": True})],
    )
    assert unsupported(result) == [("boxes", "3")]


@pytest.mark.parametrize(
    ("user", "call", "key", "right", "wrong"),
    [
        ("Book the sauna for an hour and a half tomorrow.", "book_sauna", "duration_min", 90, 60),
        ("Reserve the kiln for 2 days, please.", "reserve_kiln", "rental_hours", 48, 24),
    ],
)
def test_a_length_the_user_gave_supplies_a_key_named_for_its_unit(
    user: str, call: str, key: str, right: int, wrong: int
) -> None:
    """A length of time in any unit supplies the number a key named for a unit counts of it; another
    number under that key stays unsupplied."""
    assert unsupported(conversation(user, [(call, {key: right}, {"ok": True})])) == []
    assert unsupported(conversation(user, [(call, {key: wrong}, {"ok": True})])) == [(key, str(wrong))]


def test_a_read_never_needs_its_numbers_supplied() -> None:
    """A search's page size is nobody's claim: read-named tools are not writes."""
    result = conversation("Find my orders.", [("search_orders", {"limit": 50}, {"orders": []})])
    assert unsupported(result) == []


def test_an_earlier_results_value_under_the_same_key_supplies_it_and_a_change_by_the_users_count() -> None:
    """The order holds quantity 2; "add one more" makes 3; 5 is nobody's."""
    read = ("get_order", {"order_id": "ORD-4471"}, ORDER)
    same = conversation("Keep ORD-4471 as it is.", [read, ("update_order", {"quantity": 2}, {"ok": True})])
    assert unsupported(same) == []
    more = conversation(
        "Add one more box to ORD-4471.", [read, ("update_order", {"quantity": 3}, {"ok": True})]
    )
    assert unsupported(more) == []
    wrong = conversation(
        "Add one more box to ORD-4471.", [read, ("update_order", {"quantity": 5}, {"ok": True})]
    )
    assert unsupported(wrong) == [("quantity", "5")]


def test_payment_shares_that_add_up_to_a_stated_total_are_supplied() -> None:
    """The order's total is 24 (a sum over its items): shares of 20 and 4 make it; 20 and 5
    do not, and neither share is then supplied."""
    read = ("get_order", {"order_id": "ORD-4471"}, ORDER)
    shares = [{"card": "gift_1", "amount": 20}, {"card": "visa_2", "amount": 4}]
    ok = conversation(
        "Pay ORD-4471 with gift_1 and visa_2.", [read, ("pay_order", {"payments": shares}, {"ok": True})]
    )
    assert unsupported(ok) == []
    shares[1]["amount"] = 5
    off = conversation(
        "Pay ORD-4471 with gift_1 and visa_2.", [read, ("pay_order", {"payments": shares}, {"ok": True})]
    )
    assert unsupported(off) == [("payments[0].amount", "20"), ("payments[1].amount", "5")]


@pytest.mark.parametrize(
    ("user", "answer", "call", "made_up"),
    [
        # A kayak rental: the total the answer quoted, typed into the booking.
        (
            "Yes, book the two kayaks.",
            "Two kayaks for the afternoon: 2 × €19.50 = €39.00. Shall I book it?",
            ("book_kayaks", {"kayaks": 2, "total": 39.0}),
            41.0,
        ),
        # A lab's sample intake: the estimate the answer gave, under an ``estimated_total``.
        (
            "Go ahead and log the 6 water samples.",
            "Six water samples at $42.50 each come to $255.00 before any rush fee.",
            ("create_intake", {"samples": 6, "estimated_total": 255.0}),
            265.0,
        ),
        # A water park: the total of one thing, the ticket, under a ``ticket_total``.
        (
            "OK, book the tickets.",
            "Two child tickets at $21.00 each: $42.00 in total. Shall I book them?",
            ("create_ticket_booking", {"children": 2, "ticket_total": 42.0}),
            44.0,
        ),
    ],
)
def test_a_key_named_a_total_takes_an_amount_stated_or_held(
    user: str, answer: str, call: tuple[str, dict[str, Any]], made_up: float
) -> None:
    """ "total" names no thing it counts, nor the total of one thing ("ticket_total"): an amount the
    answer stated (or a result holds) supplies it, as a money key's is; an amount nobody stated is
    flagged."""
    tool, args = call
    key = next(k for k in args if k.endswith("total"))
    assert unsupported(conversation(user, [(tool, args, {"ok": True})], asked=answer)) == []
    args = {**args, key: made_up}
    assert unsupported(conversation(user, [(tool, args, {"ok": True})], asked=answer)) == [
        (key, f"{made_up:g}")
    ]


def test_a_total_of_things_counted_takes_no_amount() -> None:
    """ "guests_total" counts guests: the $8 a head the answer stated supplies no count of them."""
    args = {"menu": "set", "guests_total": 8}
    asked = "The set menu is $8 a head."
    result = conversation("Book the set menu.", [("book_table", args, {"ok": True})], asked=asked)
    assert unsupported(result) == [("guests_total", "8")]


@pytest.mark.parametrize(
    ("user", "call", "made_up"),
    [
        # A car hire desk: the driver's and the second driver's ages.
        (
            "I'm 23 and my friend Dana (she's 31) will drive too.",
            ("book_car", {"driver": {"age": 23}, "extra_driver": {"age": 31}}),
            ("extra_driver", "age", 35),
        ),
        # A climbing gym's waiver: a child's age, "aged 9".
        (
            "Sign up my son, aged 9, for the taster.",
            ("book_taster", {"climber_age": 9}),
            ("", "climber_age", 8),
        ),
        # A ski school: "who's 7", at the end of the sentence.
        (
            "Two lessons for my daughter, who's 7.",
            ("book_lessons", {"child_ages": [7]}),
            ("", "child_ages", [6]),
        ),
    ],
)
def test_an_age_the_user_gave_with_no_noun_supplies_a_key_naming_age(
    user: str, call: tuple[str, dict[str, Any]], made_up: tuple[str, str, Any]
) -> None:
    """ "I'm 23", "she's 31", "aged 9", "who's 7": an age, said with no noun after it, is said of
    age; an age nobody gave is flagged."""
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []
    outer, key, wrong = made_up
    changed = {**args, outer: {**args[outer], key: wrong}} if outer else {**args, key: wrong}
    path = f"{outer}.{key}" if outer else key
    path, shown = (f"{path}[0]", str(wrong[0])) if isinstance(wrong, list) else (path, str(wrong))
    assert unsupported(conversation(user, [(tool, changed, {"ok": True})])) == [(path, shown)]


def test_an_age_is_no_count_of_anything() -> None:
    """ "who's 9" says an age: a key of generic words ("quantity"), which takes a count said of
    any noun, does not take it."""
    user = "Book a taster for my son, who's 9, please."
    assert unsupported(conversation(user, [("book_taster", {"climber_age": 9}, {"ok": True})])) == []
    assert unsupported(conversation(user, [("book_taster", {"quantity": 9}, {"ok": True})])) == [
        ("quantity", "9")
    ]


def test_zero_is_every_counts_default() -> None:
    result = conversation(
        "Order TEA-01.", [("create_order", {"sku": "TEA-01", "gift_wraps": 0}, {"ok": True})]
    )
    assert unsupported(result) == []


def test_a_number_in_the_system_prompt_does_not_supply_a_count() -> None:
    """A policy that mentions "3 boxes" supplies nothing the user did not ask for."""
    call = ("create_order", {"sku": "TEA-01", "boxes": 3}, {"ok": True})
    result = conversation("Order TEA-01.", [call], system="Customers may order at most 3 boxes at a time.")
    assert unsupported(result) == [("boxes", "3")]


@pytest.mark.parametrize(
    ("said", "call"),
    [
        (
            "The Oak Room holds 120 guests at most.",
            ("book_hall", {"hall": "Oak Room", "guests": 120}, {"ok": 1}),
        ),
        ("The north dock fits 2 kayaks.", ("reserve_dock", {"dock": "north", "kayaks": 2}, {"ok": True})),
    ],
)
def test_a_count_an_answer_said_of_the_noun_supplies_it_once_the_user_has_read_it(
    said: str, call: tuple[str, dict[str, Any], Any]
) -> None:
    """ "120 guests" in an answer the user read before asking for the write supplies guests 120, as
    their own words would; said in the message that makes the call, it vouches for nothing."""
    key, value = next((key, value) for key, value in call[1].items() if value in (120, 2))
    assert unsupported(conversation("Book it, please.", [call], asked=said)) == []
    assert unsupported(conversation("Book it, please.", [call], [said])) == [(key, str(value))]


@pytest.mark.parametrize(
    ("said", "call"),
    [
        # a marina: the nightly fee's cents are no count of nights
        (
            "The north berth is free for 7 nights at $45.60 per night.",
            ("book_berth", {"berth": "north", "nights": 7}, {"ok": True}),
        ),
        # a venue: the thousands of a capacity are no count of guests
        (
            "Hall B seats 250 guests; Hall A holds 1,200 guests, far more than you need.",
            ("book_hall", {"hall": "B", "guests": 250}, {"ok": True}),
        ),
    ],
)
def test_a_piece_of_a_written_number_is_no_count_of_the_noun_after_it(
    said: str, call: tuple[str, dict[str, Any], Any]
) -> None:
    """ "$45.60 per night" says no 60 nights, nor "1,200 guests" 200 guests: the answer gives the
    noun one count, which the user took up, and a count beside the whole number is the model's."""
    key, value = next((key, value) for key, value in call[1].items() if isinstance(value, int))
    assert unsupported(conversation("Book it, please.", [call], asked=said)) == []
    other = 60 if value == 7 else 200
    changed = (call[0], {**call[1], key: other}, call[2])
    assert unsupported(conversation("Book it, please.", [changed], asked=said)) == [(key, str(other))]


def test_an_answer_that_gives_a_noun_two_counts_supplies_neither() -> None:
    """ "120 guests" for one room and "80 guests" for another: the user who books one room took up
    no count, so a booking for 80 is not supplied."""
    said = "The Oak Room holds 120 guests and the Elm Room 80 guests."
    call = ("book_hall", {"hall": "Oak Room", "guests": 80}, {"ok": 1})
    assert unsupported(conversation("Book the Oak Room.", [call], asked=said)) == [("guests", "80")]


def test_a_short_reply_to_a_question_that_named_the_thing_supplies_it() -> None:
    """ "How many boxes?" "2, please." supplies boxes 2; the same reply to another question
    does not."""
    call = ("create_order", {"sku": "TEA-01", "boxes": 2}, {"ok": True})
    assert unsupported(conversation("2 of TEA-01, please.", [call], asked="How many boxes of TEA-01?")) == []
    assert unsupported(conversation("2 of TEA-01, please.", [call], asked="Which day suits TEA-01?")) == [
        ("boxes", "2")
    ]


@pytest.mark.parametrize(
    ("call", "lone", "several"),
    [
        (
            ("add_luggage", {"booking": "BK-1", "total_bags": 2}, {"ok": True}),
            "Add two suitcases to BK-1.",
            "Add two suitcases and 3 umbrellas to BK-1.",
        ),
        (
            ("reserve_stock", {"sku": "TEA-01", "pallet_count": 4}, {"ok": True}),
            "Hold 4 skids of TEA-01 for me.",
            "Hold 4 skids of TEA-01 and 6 crates of TEA-02.",
        ),
    ],
)
def test_the_one_count_of_a_message_supplies_a_count_whatever_it_names(call, lone, several) -> None:
    """A message that says one count gave it, in whatever words ("two suitcases" for bags, "4
    skids" for pallets): no synonym table decides. Where it says several, each counts only
    the noun it is said of."""
    assert unsupported(conversation(lone, [call])) == []
    name, args, _ = call
    key = next(k for k, v in args.items() if isinstance(v, int))
    assert unsupported(conversation(several, [call])) == [(key, str(args[key]))]


@pytest.mark.parametrize(
    ("call", "user", "wrong"),
    [
        # A climbing gym: the user counts the party they belong to.
        (("book_wall", {"wall": "W-2", "climbers": 5}, {"ok": True}), "There are five of us tonight.", 6),
        # A ferry desk: the same, in figures.
        (("book_cabin", {"sailing": "S-9", "berths": 4}, {"ok": True}), "Book a cabin, 4 of us.", 3),
    ],
)
def test_a_group_the_user_counts_themselves_in_is_the_one_count_of_their_message(call, user, wrong) -> None:
    """ "Five of us" counts people as "five climbers" would: the one count of the message supplies
    the write's count; another number is still flagged."""
    assert unsupported(conversation(user, [call])) == []
    name, args, result = call
    key = next(k for k, v in args.items() if isinstance(v, int))
    assert unsupported(conversation(user, [(name, {**args, key: wrong}, result)])) == [(key, str(wrong))]


@pytest.mark.parametrize(
    ("call", "user", "wrong"),
    [
        # A pool desk: a household of its adults and children.
        (
            ("buy_pass", {"household": "Reyes", "members": 5}, {"ok": True}),
            "We're two adults and three kids.",
            4,
        ),
        # A freight desk: a load of its pallets and crates, in figures.
        (("book_truck", {"lane": "L-4", "pieces": 6}, {"ok": True}), "It's 4 pallets and 2 crates.", 8),
    ],
)
def test_the_counts_a_message_lists_add_up_to_the_group_they_make(call, user, wrong) -> None:
    """A message that lists two or three counts of things ("two adults and three kids") gives
    their total too, the size of the group they make; another number is still flagged, and so is
    a sum of counts no list joins ("2 rooms for 3 nights")."""
    assert unsupported(conversation(user, [call])) == []
    name, args, result = call
    key = next(k for k, v in args.items() if isinstance(v, int))
    assert unsupported(conversation(user, [(name, {**args, key: wrong}, result)])) == [(key, str(wrong))]
    apart = "Please book 2 rooms for 3 nights."
    assert unsupported(conversation(apart, [(name, {**args, key: 5}, result)])) == [(key, "5")]


def test_a_part_of_the_users_group_is_no_count_of_it() -> None:
    """ "Two of us are vegetarian" counts some of the party, not the party."""
    call = ("book_table", {"venue": "V-1", "guests": 2}, {"ok": True})
    assert unsupported(conversation("Book a table; two of us are vegetarian.", [call])) == [("guests", "2")]


def test_a_number_typed_into_a_call_whose_name_says_no_change_is_no_writes_number() -> None:
    """A status query's page size, a stock level's zone: filters of a read, which nobody must
    have said. A name that leads with its object ("ticket_status") says no change, and a
    word that is as often a noun ("order") says none either."""
    for tool, args in (
        ("ticket_status", {"ticket": "TK-31", "page_size": 25}),
        ("stock_level", {"sku": "TEA-01", "zone": 4}),
        ("order_history", {"sku": "TEA-01", "limit": 7}),
    ):
        result = conversation("Where do things stand with TK-31 and TEA-01?", [(tool, args, {"ok": True})])
        assert unsupported(result) == [], tool


def test_a_verb_of_a_change_anywhere_in_the_name_makes_it_a_write() -> None:
    for tool in ("stock_level_update", "ticket_assign", "exchange_items"):
        result = conversation("Please handle TEA-01.", [(tool, {"sku": "TEA-01", "count": 6}, {"ok": True})])
        assert unsupported(result) == [("count", "6")], tool


@pytest.mark.parametrize(
    ("user", "call"),
    [
        (
            "Please file a 6-month extension for permit P-77.",
            ("extend_permit", {"permit": "P-77", "months": 6}),
        ),
        ("Book the 3-night package at Lodge L-2.", ("book_package", {"lodge": "L-2", "nights": 3})),
    ],
)
def test_a_count_joined_to_its_noun_by_a_hyphen_is_said_of_that_noun(user: str, call: tuple) -> None:
    """ "a 6-month extension" says 6 months as "6 months" does; it says nothing of another noun."""
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []
    key = next(k for k, v in args.items() if isinstance(v, int))
    other = {**args, key: args[key] + 1}
    assert unsupported(conversation(user, [(tool, other, {"ok": True})])) == [(key, str(args[key] + 1))]


@pytest.mark.parametrize(
    ("user", "call"),
    [
        ("Two tickets please: 2 adults and a child.", ("book_ferry", {"adults": 2, "child": 1})),
        (
            "Reserve 3 kayaks and one paddleboard for Sunday.",
            ("reserve_gear", {"kayaks": 3, "paddleboards": 1}),
        ),
    ],
)
def test_each_count_of_a_message_is_said_of_its_own_noun(user: str, call: tuple) -> None:
    """The words after one count ("2 adults and a") do not hide the next count ("a child")."""
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []


@pytest.mark.parametrize(
    ("read", "key", "right", "wrong"),
    [
        (
            ("get_invoice", {"invoice": "INV-1"}, {"invoice": "INV-1", "total_due": 134.5}),
            "amount_cents",
            13450,
            14350,
        ),
        (("get_fine", {"fine": "F-9"}, {"fine": "F-9", "amount_due": 70.0}), "amountPence", 7000, 700),
    ],
)
def test_money_typed_in_a_minor_unit_is_the_amount_in_whole_units(
    read: tuple, key: str, right: int, wrong: int
) -> None:
    """ "amount_cents": 13450 pays the $134.50 a record holds; 14350 is nobody's."""
    name = "pay_invoice" if "invoice" in read[1] else "pay_fine"
    for value, flagged in ((right, []), (wrong, [(key, str(wrong))])):
        assert (
            unsupported(conversation("Pay it, please.", [read, (name, {key: value}, {"ok": True})]))
            == flagged
        )


@pytest.mark.parametrize(
    ("user", "call"),
    [
        ("Print 48 4x6 prints and 6 5x7s, please.", ("place_print_order", {"items": {"4x6": 48, "5x7": 6}})),
        ("Cut 12 2x4s and 3 4x8 sheets for me.", ("place_lumber_order", {"cuts": {"2x4": 12, "4x8": 3}})),
    ],
)
def test_a_count_said_of_a_name_with_digits_supplies_the_key_of_that_name(user: str, call: tuple) -> None:
    """A key that is the thing's name ("4x6", quoted in the path) takes the count said before it."""
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []
    inner = next(iter(args.values()))
    wrong = {next(iter(args)): {k: v + 1 for k, v in inner.items()}}
    assert len(unsupported(conversation(user, [(tool, wrong, {"ok": True})]))) == len(inner)


@pytest.mark.parametrize(
    ("read", "write", "key"),
    [
        (
            ("find_tables", {"party": 5, "night": "Friday"}, {"tables": [{"id": "T4", "time": "19:00"}]}),
            "book_table",
            "party",
        ),
        (
            ("search_lab_slots", {"samples": 12}, {"slots": [{"slot": "S-3", "day": "Tue"}]}),
            "reserve_lab_slot",
            "samples",
        ),
    ],
)
def test_a_number_a_read_the_tool_answered_asked_for_supplies_the_same_key(
    read: tuple, write: str, key: str
) -> None:
    """A write that repeats what a search the tool answered was asked for (the party of five it
    found tables for) is supplied, under the same key; another number is not."""
    asked = read[1][key]
    assert unsupported(conversation("Book the first one.", [read, (write, {key: asked}, {"ok": True})])) == []
    wrong = conversation("Book the first one.", [read, (write, {key: asked + 1}, {"ok": True})])
    assert unsupported(wrong) == [(key, str(asked + 1))]


@pytest.mark.parametrize(
    ("user", "call"),
    [
        # A printer-supplies order and a kayak rental: "both" says two of its noun.
        ("Please order both toner cartridges for the office.", ("place_order", {"cartridges": 2})),
        ("Reserve both kayaks for Saturday morning.", ("reserve_boats", {"kayaks": 2})),
        # A loan servicer and a painting crew: an ordinal says its number of the noun it names.
        ("Please schedule my third installment for Friday.", ("schedule_payment", {"installment": 3})),
        ("Book the crew for the second coat next week.", ("book_crew", {"coat": 2})),
        # A tile shop and a choir's seating: any number below a hundred, in words.
        ("Please order sixty-five floor tiles in slate.", ("place_order", {"tiles": 65})),
        ("Reserve thirty-three chairs for the rehearsal.", ("reserve_seating", {"chairs": 33})),
    ],
)
def test_a_number_in_words_supplies_its_noun(user: str, call: tuple) -> None:
    """ "both kayaks", "my third installment", "sixty-five tiles" say their number of their noun as
    figures do; one more is still nobody's."""
    assert_supplied_and_one_more_is_not(user, call)


def assert_supplied_and_one_more_is_not(user: str, call: tuple) -> None:
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []
    (key, value), *_ = args.items()
    assert unsupported(conversation(user, [(tool, {key: value + 1}, {"ok": True})])) == [
        (key, str(value + 1))
    ]


@pytest.mark.parametrize(
    ("user", "call"),
    [
        # A key of another word, or a generic one, takes nothing from "both" or an ordinal.
        ("Compare both hotels and book the cheaper one.", ("book_room", {"guests": 2})),
        ("I like both colors, order the blue one.", ("place_order", {"quantity": 2})),
        ("Add the second item to my cart.", ("add_to_cart", {"quantity": 2})),
        # A position is no count: the second ticket is one ticket, the first two nights two.
        ("Cancel the second ticket.", ("cancel_tickets", {"tickets": 2})),
        ("Book the first two nights only.", ("book_room", {"nights": 1})),
    ],
)
def test_both_and_an_ordinal_supply_only_a_key_holding_the_word_they_name(user: str, call: tuple) -> None:
    assert_not_supplied(user, call)


def assert_not_supplied(user: str, call: tuple) -> None:
    tool, args = call
    (key, value), *_ = args.items()
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == [(key, str(value))]


@pytest.mark.parametrize(
    ("user", "call"),
    [
        # a climbing gym: no space after the comma
        ("Book the wall for 2 adults,3 children please.", ("book_wall", {"adults": 2, "children": 3})),
        # a hostel: "rooms,3 nights"
        ("Book 2 rooms,3 nights", ("book_rooms", {"rooms": 2, "nights": 3})),
    ],
)
def test_a_count_after_punctuation_that_follows_a_word_is_still_said(user: str, call: tuple) -> None:
    """Only a point or comma after a digit makes a number's piece: after a word, it is punctuation."""
    tool, args = call
    assert unsupported(conversation(user, [(tool, args, {"ok": True})])) == []


@pytest.mark.parametrize(
    ("user", "key", "value"),
    [
        # a college: course credits are counted, not paid
        ("Please enroll me in 4 credits of evening classes.", "credits", 4),
        # a clinic: a bill split into instalments
        ("Split the clinic bill into 3 payments.", "payments", 3),
        # a gym: a count and a length of what a money word names
        ("Record 3 deposits on my gym account.", "deposit_count", 3),
        ("Give me the member discount for 5 days.", "discount_days", 5),
    ],
)
def test_a_count_said_of_a_money_words_noun_still_supplies_it(user: str, key: str, value: int) -> None:
    """A key naming money may count it ("4 credits", "3 payments") or name its rate, count or
    length: what the user said of its noun supplies it."""
    assert unsupported(conversation(user, [("create_record", {key: value}, {"ok": True})])) == []


@pytest.mark.parametrize(
    "key", ["tax_rate", "deposit_count", "discount_uses", "session_total", "guest_total"]
)
def test_a_rate_or_count_takes_no_quoted_amount(key: str) -> None:
    """A rate, a count or a total of counted things takes no amount the answer quoted: the $45.00
    of a rental typed as one is the model's own."""
    asked = "The locker rental at the Northside gym is $45.00 a month. Shall I set it up?"
    call = ("create_locker_rental", {key: 45}, {"ok": True})
    assert unsupported(conversation("Yes, go ahead.", [call], asked=asked)) == [(key, "45")]


GYM_RATES = (
    "You are the front desk of Ironbark Gym. Sales tax is 8%. Silver members get 10% off personal "
    "training packs, Gold members 15%. A late cancellation forfeits 50% of the session fee."
)


@pytest.mark.parametrize(
    ("system", "records", "user", "call", "right", "wrongs"),
    [
        # a gym: a silver member's discount, not the tax, gold's rate or the forfeit share
        (
            GYM_RATES,
            [("get_member", {"member_id": "M-4"}, {"member_id": "M-4", "tier": "silver"})],
            "Sell me the 10-session PT pack, please.",
            ("sell_pack", "discount_pct"),
            10,
            [8, 15, 50],
        ),
        # a warehouse: the surcharge is no refund share
        (
            "Late pickups add a 5% surcharge. Damaged pallets are refunded in full.",
            [],
            "Pallet P-9 arrived damaged, and I picked up late.",
            ("refund_pallet", "refund_pct"),
            None,
            [5],
        ),
    ],
)
def test_a_prompt_percentage_is_the_rate_of_what_its_sentence_names_for_whom_the_records_name(
    system: str, records: list, user: str, call: tuple[str, str], right: int | None, wrongs: list[int]
) -> None:
    """Of the prompt's percentages, a key naming a percent takes the one whose sentence names what the
    key does ("off" a discount), for the tier the records hold where several are stated."""
    tool, key = call
    for value, expected in [*([(right, [])] if right else []), *((w, [(key, str(w))]) for w in wrongs)]:
        calls = [*records, (tool, {key: value}, {"ok": True})]
        assert unsupported(conversation(user, calls, system=system)) == expected


@pytest.mark.parametrize(
    ("asked", "call"),
    [
        # a kennel: the deposit the answer quoted
        (
            "Two dogs for 6 nights come to £870.80, with a £217.70 deposit today.",
            ("create_boarding", {"deposit": 217.7}),
        ),
        # a conference desk: fees, in the plural, the answer quoted
        (
            "Six passes are $6,025.50, plus $21.00 in processing fees.",
            ("create_registration", {"processing_fees": 21}),
        ),
    ],
)
def test_a_key_naming_money_in_any_number_takes_an_amount_stated(asked: str, call: tuple) -> None:
    """A deposit, a discount or fees (plural) are money: an amount the answer quoted supplies them,
    and another is the model's own."""
    tool, args = call
    ((key, value),) = args.items()
    assert unsupported(conversation("Yes, go ahead.", [(tool, args, {"ok": True})], asked=asked)) == []
    wrong = value + 5
    assert unsupported(conversation("Yes, go ahead.", [(tool, {key: wrong}, {"ok": True})], asked=asked)) == [
        (key, str(wrong))
    ]


@pytest.mark.parametrize(
    ("system", "call"),
    [
        # a gym: the member discount the prompt states
        ("Gold members get 15% off personal training packs.", ("sell_pack", {"discount_pct": 15})),
        # a warehouse: the prompt's surcharge on late pickups
        (
            "A late pickup adds a 5% surcharge to the storage bill.",
            ("add_surcharge", {"surcharge_percent": 5}),
        ),
    ],
)
def test_a_percentage_the_prompt_states_is_said_of_a_percent(system: str, call: tuple) -> None:
    """The prompt's rate is the desk's policy: a key naming a percent takes it, and no other."""
    tool, args = call
    (key, value), *_ = args.items()
    user = "Please go ahead."
    assert unsupported(conversation(user, [(tool, args, {"ok": True})], system=system)) == []
    args = {key: value + 1}
    assert unsupported(conversation(user, [(tool, args, {"ok": True})], system=system)) == [
        (key, str(value + 1))
    ]


@pytest.mark.parametrize(
    ("user", "call"),
    [
        ("Raise my pension contribution from 4% to 7%.", ("set_contribution", {"percent": 7})),
        ("Put a 12.5 % markdown on the winter coats.", ("apply_markdown", {"markdown_pct": 12.5})),
    ],
)
def test_a_number_with_a_percent_sign_is_said_of_a_percent(user: str, call: tuple) -> None:
    assert_supplied_and_one_more_is_not(user, call)


@pytest.mark.parametrize(
    ("user", "call"),
    [
        ("Order the blue mugs, with my 15% discount.", ("place_order", {"quantity": 15})),
        ("Book a table for Friday and apply my 20% off coupon.", ("book_table", {"persons": 20})),
        ("Set the rate to 12% for the plan.", ("update_plan", {"period_months": 12})),
    ],
)
def test_a_percent_is_no_count_of_things_nor_of_a_word_that_starts_like_percent(
    user: str, call: tuple
) -> None:
    """ "15%" says how much, never how many, and only of a key holding the word percent: a
    quantity, persons or a period of the same number are still the model's own."""
    assert_not_supplied(user, call)


@pytest.mark.parametrize(
    ("system", "result", "call", "wrong"),
    [
        # a ferry desk: both legs' fares for each of the three travellers on the booking, plus the
        # prompt's insurance fee per head
        (
            "Insurance costs $30 per passenger.",
            {
                "passengers": [{"name": "A"}, {"name": "B"}, {"name": "C"}],
                "legs": [{"fare": 80}, {"fare": 60}],
            },
            ("pay_booking", {"amount": 510}),
            511,
        ),
        # a tool library: the prompt's late fee for each of the four items the loan holds
        (
            "A late return costs a flat €2.50 per item.",
            {
                "loan": "L-7",
                "items": [{"tool": "drill"}, {"tool": "saw"}, {"tool": "sander"}, {"tool": "clamp"}],
            },
            ("apply_late_fee", {"fee": 10}),
            12.5,
        ),
    ],
)
def test_money_for_each_of_a_records_rows_at_a_held_or_prompted_amount_is_supplied(
    system: str, result: dict[str, Any], call: tuple, wrong: float
) -> None:
    """A payment is a held amount (or a sum over a list), plus a fee the prompt states, times a count
    the records give; another amount is still the model's own."""
    tool, args = call
    (key,) = args
    calls = [("get_record", {"id": "R-1"}, result), (tool, args, {"ok": True})]
    assert unsupported(conversation("Please settle it.", calls, system=system)) == []
    calls[-1] = (tool, {key: wrong}, {"ok": True})
    assert unsupported(conversation("Please settle it.", calls, system=system)) == [(key, str(wrong))]


@pytest.mark.parametrize(
    ("user", "system", "result", "amount"),
    [
        # a list's own total for each of its own rows: the two items' 65 twice
        ("Please refund the blue scarf.", "", {"items": [{"price": 45}, {"price": 20}]}, 130),
        # a limit the prompt states is no fee per head: $500 for each of two items
        (
            "Please refund the order.",
            "Refunds above $500 need a manager's approval.",
            {"items": [{"price": 45}, {"price": 20}]},
            1000,
        ),
        # one charge for each of the two guests: a single amount is no list's sum
        (
            "Refund the minibar, I never used it.",
            "",
            {"guests": [{"name": "A"}, {"name": "B"}], "charges": [{"room": 189.0}, {"minibar": 23.75}]},
            47.5,
        ),
        # the 3 of a date is no count of things
        ("I sent the scarf back on June 3, please refund it.", "", {"price": 45}, 135),
    ],
)
def test_a_payment_per_head_takes_only_another_lists_sum_and_a_fee_stated_per_unit(
    user: str, system: str, result: dict[str, Any], amount: float
) -> None:
    calls = [("get_record", {"id": "R-1"}, result), ("issue_refund", {"amount": amount}, {"ok": True})]
    assert unsupported(conversation(user, calls, system=system)) == [("amount", str(amount))]
