"""Row-consistent grounding (amendment 1.1): a value said of a record must be that record's."""

from __future__ import annotations

from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite

TICKETS = {
    "tickets": [
        {"id": "T-100000", "opened": "2026-11-01", "state": "open", "priority": "high"},
        {"id": "T-100042", "opened": "2026-11-15", "state": "closed", "priority": "low"},
    ]
}
ACCOUNTS = {
    "accounts": [
        {"account_id": "ACC-7731", "plan": "basic", "owner": "dana_k_77"},
        {"account_id": "ACC-9120", "plan": "premium", "owner": "lee_p_12"},
    ]
}


def findings(answer: str, *results: Any) -> list[tuple[str, str]]:
    calls = [{"tool": f"get_{i}", "result": result} for i, result in enumerate(results)]
    result = run_suite(build_conversation(build_turn(answer, calls=calls)))
    return [(f["code"], f["claim"]["text"]) for f in result["findings"] if f["severity"] == "flag"]


def test_a_date_of_another_record_said_of_the_record_named_is_flagged_with_both_records() -> None:
    """T-100042 opened on 2026-11-15; the answer gives it T-100000's date."""
    answer = "T-100042 was opened on 2026-11-01."
    assert findings(answer, TICKETS) == [("value_of_other_record", "2026-11-01")]
    result = run_suite(
        build_conversation(build_turn(answer, calls=[{"tool": "list_tickets", "result": TICKETS}]))
    )
    [finding] = [f for f in result["findings"] if f["code"] == "value_of_other_record"]
    assert [e["path"] for e in finding["evidence"]] == ["tickets[1].opened", "tickets[0].opened"]


def test_the_records_own_value_and_a_value_it_has_no_field_for_pass() -> None:
    """Its own date passes; a date in a field the record lacks is not judged."""
    assert findings("T-100042 was opened on 2026-11-15.", TICKETS) == []
    due = {"tickets": [{"id": "T-100000", "due": "2026-12-01"}, {"id": "T-100042", "opened": "2026-11-15"}]}
    assert findings("T-100042 is due on 2026-12-01.", due) == []


def test_two_records_named_in_one_sentence_are_not_judged() -> None:
    """With both tickets in the sentence, which date is whose is the reader's to see."""
    assert findings("T-100042 and T-100000 were opened on 2026-11-01 and 2026-11-15.", TICKETS) == []


@pytest.mark.parametrize(
    "answer",
    [
        # A table of tickets is one stretch of text naming both; the record named alone is later.
        "| Ticket | Opened |\n|---|---|\n| T-100000 | 2026-11-01 |\n| T-100042 | 2026-11-15 |\n\n"
        "T-100042 is the newer one.",
        # Accounts compared in one sentence, then one of them picked out in a sentence of its own.
        "ACC-7731 has the basic plan; ACC-9120 has premium. ACC-9120 costs more.",
    ],
)
def test_a_stretch_naming_several_records_is_not_judged_though_one_is_named_alone_elsewhere(
    answer: str,
) -> None:
    """A record named alone in one sentence does not make it the record of another sentence
    that names it beside others: each value there stays its own row's."""
    assert findings(answer, TICKETS, ACCOUNTS) == []


def test_an_amount_is_judged_only_in_its_own_clause() -> None:
    """ "$40 from the gift card, $15 from card 4421" names no record for the $40."""
    wallet = {
        "methods": [
            {"id": "card_4421", "balance": 15},
            {"id": "gift_9911", "balance": 40},
        ]
    }
    assert findings("Payment: $40 from the gift card, $15 from card_4421.", wallet) == []
    assert findings("Card card_4421 has a balance of $40.", wallet) == [("value_of_other_record", "40")]


def test_a_field_value_said_against_the_record_is_contradicted() -> None:
    """ACC-7731's plan is basic; "the Premium plan" is a value the field takes (the account
    beside it has it), said of ACC-7731 by name."""
    answer = "Since ACC-7731 is on the Premium plan, support is included."
    assert findings(answer, ACCOUNTS) == [("contradicted_value", "Premium")]


def test_a_matching_value_a_word_no_record_uses_and_a_proposal_pass() -> None:
    """ "Basic plan" is its value; "monthly plan" is no value of the field; "if you upgrade to
    the Premium plan" describes no record."""
    assert findings("ACC-7731 is on the Basic plan.", ACCOUNTS) == []
    assert findings("ACC-7731 is on a monthly plan.", ACCOUNTS) == []
    assert findings("If you upgrade ACC-7731 to the Premium plan, support is included.", ACCOUNTS) == []


def test_a_field_value_said_of_no_record_by_name_is_not_judged() -> None:
    """ "your plan: Premium" does not say which account it means."""
    assert findings("Your plan: Premium.", ACCOUNTS) == []


SHIPMENTS = {
    "shipments": [
        {"id": "SHP-2201", "origin": "LEEDS", "destination": "YORK", "state": "in_transit"},
        {"id": "SHP-2202", "origin": "YORK", "destination": "HULL", "state": "delivered"},
    ]
}


def test_a_route_said_of_a_record_against_its_own_start_and_end_is_contradicted() -> None:
    """SHP-2201 goes LEEDS to YORK; "SHP-2201 from YORK to LEEDS" has it backwards."""
    assert findings("Shipment SHP-2201 from YORK to LEEDS is on its way.", SHIPMENTS) == [
        ("contradicted_value", "YORK to LEEDS")
    ]


def test_the_records_own_route_and_places_no_record_knows_pass() -> None:
    """Its own route passes; "to the depot" names no place the records use."""
    assert findings("Shipment SHP-2201 (LEEDS to YORK) is on its way.", SHIPMENTS) == []
    assert findings("Shipment SHP-2201 from LEEDS to depot 4 is on its way.", SHIPMENTS) == []


# --- a write's own receipt ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "write", "right", "wrong"),
    [
        (  # a ticket desk: a cancellation refunds
            {"tool": "get_booking", "args": {"booking": "B-1"}, "result": {"booking": "B-1", "paid": 90}},
            {
                "tool": "cancel_booking",
                "args": {"booking": "B-1"},
                "result": {"booking": "B-1", "paid": 90, "refund": {"amount": 30, "to": "card_1"}},
            },
            "Cancelled: a refund of $30 goes back to card_1.",
            "Cancelled: a refund of $10 goes back to card_1.",
        ),
        (  # an inventory: a purchase order is charged
            {
                "tool": "get_supplier",
                "args": {"supplier": "S-9"},
                "result": {"supplier": "S-9", "spent": 1200},
            },
            {
                "tool": "create_purchase_order",
                "args": {"supplier": "S-9", "sku": "BOLT-6"},
                "result": {"order": "PO-7", "spent": 1200, "charge": {"amount": 560.5}},
            },
            "Ordered; the supplier charged $560.50 for it.",
            "Ordered; the supplier charged $650.50 for it.",
        ),
    ],
)
def test_an_amount_the_write_s_own_result_contradicts_is_flagged(read, write, right, wrong) -> None:
    """A change's result is the receipt of what it did: a refund or a charge stated otherwise
    than it records is contradicted_value, even where the figure was said elsewhere; what the
    result repeats of the record read before it (a past payment) is not the change's doing."""

    def flags(answer: str) -> list[tuple[str, str]]:
        user = "Go ahead: $10, $30, $90, $1200, $560.50 and $650.50 are all fine by me."
        result = run_suite(build_conversation(build_turn(answer, calls=[read, write], user=user)))
        return [
            (f["code"], f["claim"]["text"])
            for f in result["findings"]
            if f["severity"] == "flag" and f["claim"]
        ]

    assert flags(right) == []
    assert flags(wrong) == [("contradicted_value", wrong.split(" ")[-5 if "refund" in wrong else -3])]
    # The record's past, as read before the change and repeated by it, is no receipt of it.
    past = read["result"].get("paid") or read["result"].get("spent")
    assert flags(f"Before this, ${past} had been paid in all. {right}") == []


@pytest.mark.parametrize(
    ("write", "right", "wrong"),
    [
        (  # a pottery studio charging in cents
            {"tool": "book_wheel_class", "args": {"class": "W-3"}, "result": {"charged_cents": 4500}},
            "Booked: $45.00 was charged to your card.",
            "Booked: $54.00 was charged to your card.",
        ),
        (  # a parts shop refunding in pence
            {"tool": "process_return", "args": {"part": "P-81"}, "result": {"refundPence": 1299}},
            "Returned: a refund of £12.99 is on its way.",
            "Returned: a refund of £21.99 is on its way.",
        ),
    ],
)
def test_a_receipt_that_counts_in_cents_is_read_in_whole_units(write, right, wrong) -> None:
    """``charged_cents: 4500`` records $45.00: the answer that says so agrees with its receipt;
    one that says another amount is contradicted, the receipt's amount named in whole units."""

    def flags(answer: str) -> list[dict]:
        result = run_suite(build_conversation(build_turn(answer, calls=[write])))
        return [f for f in result["findings"] if f["severity"] == "flag" and f["claim"]]

    assert flags(right) == []
    [found] = flags(wrong)
    assert found["code"] == "contradicted_value"
    assert found["record_value"] in ("45", "12.99")


@pytest.mark.parametrize(
    ("write", "answer", "wrong"),
    [
        (  # a ticket desk
            {
                "tool": "cancel_booking",
                "args": {"booking": "B-1"},
                "result": {"booking": "B-1", "refund": 30},
            },
            "Cancelled: a refund of $10 goes back to your card.",
            "$10",
        ),
        (  # an inventory
            {
                "tool": "create_purchase_order",
                "args": {"sku": "BOLT-6"},
                "result": {"order": "PO-7", "charge": 560.5},
            },
            "Ordered; the supplier charged $650.50 for it.",
            "$650.50",
        ),
    ],
)
def test_a_figure_the_receipt_contradicts_is_one_flag_not_two(write, answer, wrong) -> None:
    """A figure nobody supplied that the write's own result contradicts is one defect: the
    contradicted_value flag names the right figure, and no unsupported_value flag repeats it."""
    result = run_suite(build_conversation(build_turn(answer, calls=[write])))
    flags = [
        (f["code"], f["claim"]["text"]) for f in result["findings"] if f["severity"] == "flag" and f["claim"]
    ]
    assert flags == [("contradicted_value", wrong)]
