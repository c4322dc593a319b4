"""Figures an answer computes (amendment 1.1, "Derivations"): a documented derivation makes a
figure ``computed_value`` (info) with the derivation and its operands in the finding; a figure
that needs more, or that does not fit what its sentence says, stays ``unsupported_value``."""

from __future__ import annotations

from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite

RESERVATION = {
    "reservation_id": "K1NW8N",
    "flights": [
        {"flight_number": "HAT023", "date": "2024-05-26", "price": 53},
        {"flight_number": "HAT204", "date": "2024-05-28", "price": 71},
        {"flight_number": "HAT021", "date": "2024-05-28", "price": 65},
    ],
    "payment_history": [{"payment_id": "gift_card_6136092", "amount": 567}],
}
SEARCH = [
    {"flight_number": "HAT136", "prices": {"economy": 152, "business": 400}},
    {"flight_number": "HAT039", "prices": {"economy": 103, "business": 300}},
    {"flight_number": "HAT218", "prices": {"economy": 158, "business": 410}},
]


def run(answer: str, *results: Any, user: str = "Please help.") -> dict[str, Any]:
    calls = [{"tool": f"read_{i}", "result": result} for i, result in enumerate(results)]
    return run_suite(build_conversation(build_turn(answer, calls=calls, user=user)))


def flagged(result: dict[str, Any]) -> list[str]:
    return [f["claim"]["text"] for f in result["findings"] if f["code"] == "unsupported_value"]


def run_with_prompt(answer: str, result: Any, prompt: str) -> dict[str, Any]:
    """The answer after one lookup's ``result``, under the system prompt ``prompt``."""
    turn = build_turn(answer, calls=[{"tool": "lookup", "result": result}])
    return run_suite(build_conversation(turn) | {"system": prompt})


def computed(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each computed figure as written, with its derivation."""
    return {f["claim"]["text"]: f["derivation"] for f in result["findings"] if f["code"] == "computed_value"}


# --- sums ---------------------------------------------------------------------------------


def test_a_total_over_a_records_list_is_computed_and_one_leg_short_is_not() -> None:
    """189 is the sum of the reservation's three legs; 136 (all but the first) is flagged,
    though two legs share a date."""
    result = run("The reservation's total price is $189.", RESERVATION)
    assert flagged(result) == []
    assert computed(result)["189"] == {"kind": "column-sum", "from": "Σ flights[].price"}
    assert flagged(run("The reservation's total price is $136.", RESERVATION)) == ["136"]


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        (
            {"lines": [{"item": "apples", "amount": 6.0}, {"item": "pears", "amount": 4.0}], "coupon": 1.5},
            "| Item | Amount |\n|---|---|\n| Apples | $6.00 |\n| Coupon | −$1.50 |\n| Pears | $4.00 |\n"
            "| **Total** | **${}** |",
            "8.50",
            "11.50",
        ),
        (
            {"gross": 2400.0, "tax_withheld": 360.0, "union_dues": 25.0},
            "- Gross pay: $2,400.00\n- Tax withheld: -$360.00\n- Union dues: -$25.00\n- Total take-home: ${}",
            "2,015.00",
            "2,785.00",
        ),
    ],
)
def test_an_amount_written_with_a_minus_is_taken_off_a_total(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A ledger's "−$1.50" is a deduction: the total that takes it off is a sum, and the one that
    adds it is flagged."""
    found = run(answer.format(right), result)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "sum"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


def test_a_list_bullet_before_an_amount_is_no_minus() -> None:
    """ "- $30.00" is a list's item, added as any other."""
    found = run(
        "- $30.00 for the frame\n- $12.00 for the glass\n- Total: $42.00", {"frame": 30.0, "glass": 12.0}
    )
    assert flagged(found) == []
    assert computed(found)["42.00"]["kind"] == "sum"


def test_a_total_of_the_amounts_the_answer_lists_names_them_as_operands() -> None:
    """ "Flight 1: $152, Flight 2: $103, Total: $255": the operands are the answer's own spans."""
    answer = "- Flight 1: $152\n- Flight 2: $103\n- Total: $255"
    result = run(answer, SEARCH)
    derivation = computed(result)["255"]
    assert derivation["kind"] == "sum"
    assert [answer[o["start"] : o["end"]] for o in derivation["operands"]] == ["152", "103"]


def test_a_listed_total_that_leaves_out_a_leg_is_flagged() -> None:
    """Three legs listed without a break, a total of the last two: no run starts there."""
    answer = "- Leg 1: $152\n- Leg 2: $103\n- Leg 3: $158\n- Total: $261"
    assert flagged(run(answer, SEARCH)) == ["261"]


def test_a_total_over_the_records_the_answer_names_is_computed() -> None:
    """ "HAT136 and HAT039 … total $255" sums the economy price of each named flight; a total
    that takes one flight's business fare is not a sum of one key and is flagged."""
    result = run("Flights HAT136 and HAT039 in economy: total $255.", SEARCH)
    assert computed(result)["255"]["from"] == "prices.economy of HAT136 + prices.economy of HAT039"
    assert flagged(run("Flights HAT136 and HAT039 in economy: total $552.", SEARCH)) == ["552"]


def test_the_answers_own_written_arithmetic_is_evaluated() -> None:
    """ "$152 + $103 = $255" explains 255; "$152 + $103 = $265" is wrong arithmetic, flagged."""
    assert computed(run("Price: $152 + $103 = $255.", SEARCH))["255"]["kind"] == "sum"
    assert flagged(run("Price: $152 + $103 = $265.", SEARCH)) == ["265"]
    assert computed(run("Total $255 ($152 + $103).", SEARCH))["255"]["kind"] == "sum"
    # Markdown emphasis on the result is no part of it.
    assert computed(run("Price: $152 + $103 = **$255**.", SEARCH))["255"]["kind"] == "sum"
    assert flagged(run("Price: $152 + $103 = **$265**.", SEARCH)) == ["265"]


@pytest.mark.parametrize(
    ("result", "right", "wrong"),
    [
        # A poster print shop: a bracket, and words naming the terms.
        (
            {"poster": "A2 matte", "copies": 4, "unit_price": 18.0, "rush_fee": 4.5},
            "4 posters at (€18.00 + €4.50 rush) × 4 posters = €90.00.",
            "4 posters at (€18.00 + €4.50 rush) × 4 posters = €92.00.",
        ),
        # A software reseller: a count named by its noun before the bracket.
        (
            {"plan": "team", "seats": 5, "seat_price": 30, "support_per_seat": 6},
            "Renewal: 5 licences × ($30 + $6 support) = $180.",
            "Renewal: 5 licences × ($30 + $6 support) = $190.",
        ),
        # A garden centre: a product of a named count and a price, no bracket.
        (
            {"sku": "MULCH-40L", "price": 3.4, "bags_needed": 12},
            "You need 12 bags × $3.40 = $40.80.",
            "You need 12 bags × $3.40 = $40.90.",
        ),
    ],
)
def test_written_arithmetic_reads_brackets_and_the_words_naming_its_terms(
    result: dict[str, Any], right: str, wrong: str
) -> None:
    """Products bind before sums, a bracket before both, and a word or two after a term names what
    it counts: arithmetic that holds explains its figure, and a slip in it is flagged with what it
    gives."""
    assert_written_arithmetic(result, right, wrong, right.rsplit(" ", 1)[-1].strip("€$."))


def assert_written_arithmetic(result: dict[str, Any], right: str, wrong: str, figure: str) -> None:
    """``right``'s arithmetic explains ``figure``; ``wrong``'s slip is flagged with what it gives."""
    assert flagged(run(right, result)) == []
    assert computed(run(right, result))[figure]["from"].endswith("as the answer writes it")
    [slip] = [f for f in run(wrong, result)["findings"] if f["code"] == "unsupported_value"]
    assert slip["arithmetic"]["gives"] == figure


@pytest.mark.parametrize(
    ("result", "right", "wrong"),
    [
        # A team kit shop: the printing per shirt, for every shirt, in the cell before the amount.
        (
            {"shirts": 14, "number_print": 6.5, "name_print": 4.0},
            "| Item | Calculation | Amount |\n|---|---|---|\n| Printing | 14 × ($6.50 + $4.00) | $147.00 |",
            "| Item | Calculation | Amount |\n|---|---|---|\n| Printing | 14 × ($6.50 + $4.00) | $157.00 |",
        ),
        # A lab's sample fees: a product of a held count and a held price.
        (
            {"samples": 36, "fee_each": 12.75},
            "| Line | Working | Fee |\n|---|---|---|\n| Assays | 36 × £12.75 | **£459.00** |",
            "| Line | Working | Fee |\n|---|---|---|\n| Assays | 36 × £12.75 | **£469.00** |",
        ),
    ],
)
def test_the_cell_of_arithmetic_before_a_figures_cell_is_its_written_arithmetic(
    result: dict[str, Any], right: str, wrong: str
) -> None:
    """A table's calculation column is the answer's own arithmetic for the amount beside it, as
    "= $X" is: where it holds, it explains the figure; where it does not, the figure is flagged
    with what it gives."""
    assert_written_arithmetic(result, right, wrong, right.rsplit("|", 2)[1].strip(" *$£"))


@pytest.mark.parametrize(
    ("result", "answer", "user"),
    [
        # A hotel desk: three nights written where the user asked for two.
        (
            {"room": "R-12", "rate": 189, "fee": 25},
            "Total: 3 nights × $189 + $25 booking fee = $592.",
            "Two nights, please.",
        ),
        # A print lab: a size is no product ("4x6"), so 4 × 6 × $0.30 explains nothing.
        (
            {"order": "P-1", "prints": 48, "price": 0.3},
            "The 48 4x6 prints × $0.30 = $7.20.",
            "Print my photos.",
        ),
        # A team kit shop: fifteen shirts in the cell where the order holds fourteen.
        (
            {"shirts": 14, "number_print": 6.5, "name_print": 4.0},
            "| Item | Calculation | Amount |\n|---|---|---|\n| Printing | 15 × ($6.50 + $4.00) | $157.50 |",
            "Price the printing.",
        ),
        # A frame shop: a size in the cell before a price prices nothing.
        ({"size": "8x10", "price": 25.0}, "| Print size | Price |\n|---|---|\n| 8 × 10 | $80 |", "Price it."),
    ],
)
def test_written_arithmetic_explains_nothing_through_a_count_nobody_gave(
    result: dict[str, Any], answer: str, user: str
) -> None:
    """A count a word names ("3 nights") is no value checked on its own, so the conversation must
    hold it; digits joined by an "x" are a size, not a product. A table's calculation cell stands
    apart from its figure: each of its bare numbers must be a count the conversation holds, and a
    cell with no money in it is a size, not a price's working."""
    assert flagged(run(answer, result, user=user)) == [answer.rsplit("$", 1)[1].strip(" |.")]


@pytest.mark.parametrize(
    ("answer", "figure", "written", "gives"),
    [
        # A hardware order: the bracket after the figure.
        ("Your refund is $17.40 ($12.95 + $8.20 - $3.75).", "17.40", "$12.95 + $8.20 - $3.75", "17.40"),
        ("Your refund is $18.40 ($12.95 + $8.20 - $3.75).", "18.40", "$12.95 + $8.20 - $3.75", "17.40"),
        # A reagent budget: the arithmetic before an "=".
        ("Reagents: 4 × $31.25 = $135.00 this quarter.", "135.00", "4 × $31.25", "125.00"),
    ],
)
def test_a_figure_its_own_written_arithmetic_does_not_give_names_what_it_gives(
    answer: str, figure: str, written: str, gives: str
) -> None:
    """A slip in the answer's own arithmetic is flagged with the sum it writes and what that
    sum gives, so the reviewer sees the correction; arithmetic that holds is no flag."""
    prices = [{"sku": "HX-1", "price": 12.95}, {"sku": "HX-2", "price": 8.2}, {"sku": "HX-3", "price": 3.75}]
    result = run(answer, {"lines": prices, "kits": [{"kit": "RG-7", "unit_cost": 31.25, "per_quarter": 4}]})
    slips = [f for f in result["findings"] if f["code"] == "unsupported_value"]
    if gives == figure:
        assert slips == []
        return
    [slip] = slips
    assert slip["claim"]["text"] == figure
    assert slip["arithmetic"] == {"written": written, "gives": gives}
    assert f"the answer's own arithmetic, {written}, gives {gives}" in slip["explanation"]


# A rental quote and a lab's reagent order: each line's unit price beside its line total.
QUOTE = {
    "lines": [
        {"item": "chair", "unit_price": 2.25, "line_total": 270},
        {"item": "table", "unit_price": 11.0, "line_total": 165},
        {"item": "tent", "unit_price": 640.0, "line_total": 640},
        {"item": "lights", "unit_price": 90.0, "line_total": 90},
    ]
}
REAGENTS = {
    "order": [
        {"reagent": "buffer", "each": 18.5, "amount": 74.0},
        {"reagent": "stain", "each": 42.25, "amount": 42.25},
        {"reagent": "enzyme", "each": 310.0, "amount": 620.0},
    ]
}


@pytest.mark.parametrize(
    ("result", "rows", "total", "wrong"),
    [
        (
            QUOTE,
            [("Chairs", "$2.25", "$270.00"), ("Tables", "$11.00", "$165.00"), ("Tent", "$640.00", "$640.00")],
            "1,075.00",
            "1,085.00",
        ),
        (
            REAGENTS,
            [("Buffer", "$18.50", "$74.00"), ("Stain", "$42.25", "$42.25"), ("Enzyme", "$310.00", "$620.00")],
            "736.25",
            "746.25",
        ),
    ],
)
def test_a_total_row_of_a_table_sums_its_own_column(result: Any, rows: list, total: str, wrong: str) -> None:
    """A markdown table's total row sums the amounts above it in its column, whatever the
    other columns (unit prices) hold; a total its column does not make is flagged."""
    table = "| Item | Each | Total |\n|---|---|---|\n" + "".join(f"| {a} | {b} | {c} |\n" for a, b, c in rows)
    found = run(table + f"| **Total** | | **${total}** |", result)
    assert flagged(found) == []
    assert computed(found)[total]["kind"] == "sum"
    assert flagged(run(table + f"| **Total** | | **${wrong}** |", result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "total", "wrong"),
    [
        (  # a garage's table: parts, their subtotal, labour after it
            {"parts": [{"part": "belt", "price": 42.0}, {"part": "pump", "price": 89.99}], "labour": 35.0},
            "| Item | Price |\n|---|---|\n| Belt | $42.00 |\n| Pump | $89.99 |\n"
            "| *Parts subtotal* | $131.99 |\n| Labour | $35.00 |\n| **Total** | **${}** |",
            "166.99",
            "298.98",
        ),
        (  # a lab's list: reagents' subtotal, then courier
            {
                "reagents": [{"name": "buffer", "amount": 74.0}, {"name": "enzyme", "amount": 620.0}],
                "courier": 18,
            },
            "Buffer: $74.00\nEnzyme: $620.00\nReagents subtotal: $694.00\nCourier: $18.00\nTotal: ${}",
            "712.00",
            "1,406.00",
        ),
    ],
)
def test_a_total_carries_on_the_subtotal_before_it(result: Any, answer: str, total: str, wrong: str) -> None:
    """A total after a subtotal sums the subtotal and what follows it, never the subtotal's parts
    again: counted twice, it is flagged."""
    found = run(answer.format(total), result)
    assert flagged(found) == []
    assert computed(found)[total]["kind"] == "sum"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "total", "wrong"),
    [
        (  # a venue's quote: the hire's two rows, their sum in bold, then catering and cleaning
            {"hall": 400.0, "chairs": 120.0, "catering": 310.0, "cleaning": 45.0},
            "| Item | Price |\n|---|---|\n| Hall | $400.00 |\n| Chairs | $120.00 |\n"
            "| **Venue hire** | **$520.00** |\n| Catering | $310.00 |\n| Cleaning | $45.00 |\n"
            "| **Total** | **${}** |",
            "875.00",
            "885.00",
        ),
        (  # a clinic's bill: three fees, their sum, then a dressing and a parking fee
            {
                "fees": [{"item": "consult", "fee": 85.0}, {"item": "x-ray", "fee": 140.0}],
                "bloods": 62.5,
                "dressing": 12.25,
                "parking": 4.0,
            },
            "| Service | Fee |\n|---|---|\n| Consult | $85.00 |\n| X-ray | $140.00 |\n| Bloods | $62.50 |\n"
            "| **Clinic fees** | **$287.50** |\n| Dressing | $12.25 |\n| Parking | $4.00 |\n"
            "| **Amount due** | **${}** |",
            "303.75",
            "313.75",
        ),
    ],
)
def test_a_row_that_sums_the_rows_above_it_is_a_subtotal_however_labelled(
    result: Any, answer: str, total: str, wrong: str
) -> None:
    """A row equal to the sum of the rows above it in its column is a subtotal, whatever its label
    says: the total below carries it on with the rows after it; a total that misses is flagged."""
    found = run(answer.format(total), result)
    assert flagged(found) == []
    assert computed(found)[total]["kind"] == "sum"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "share", "wrong"),
    [
        (  # a gym: a year's membership paid from a voucher, the rest on a card
            {"plan": "annual", "price": 1140.0, "voucher": {"id": "GV-12", "balance": 150.0}, "card": "4410"},
            "Your 12-month membership is $1,140.00.\n\n**Payment:**\n- Voucher GV-12: $150.00\n"
            "- Card ending 4410: ${}",
            "990.00",
            "980.00",
        ),
        (  # a clinic: an invoice split over a health-savings card and a credit card
            {"invoice": "INV-33", "amount_due": 860, "hsa_balance": 500, "card": "0091"},
            "Invoice INV-33 comes to $860, paid as:\n1. HSA card: $500\n2. Visa ending 0091: ${}",
            "360",
            "350",
        ),
    ],
)
def test_one_share_of_a_split_is_what_the_others_leave_of_the_total(
    result: Any, answer: str, share: str, wrong: str
) -> None:
    """A list's items, one amount each, that add up to an amount the answer states are shares of it:
    the one no source carries is the total less the others; a share that leaves the sum short is
    flagged."""
    found = run(answer.format(share), result)
    assert flagged(found) == []
    assert computed(found)[share]["kind"] == "shares"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "rows", "right", "wrong"),
    [
        (  # a sports hall: a second subtotal carries the first; counting both again is no total
            {"hall": 110.0, "chairs": 25.0, "locker": 12.0, "towels": 7.0},
            [("Hall", "$110.00"), ("Chairs", "$25.00"), ("**Hire**", "**$135.00**"), ("Lockers", "$12.00")]
            + [("**Hire and lockers**", "**$147.00**"), ("Towels", "$7.00")],
            "154.00",
            "301.00",
        ),
        (  # a clinic: a scan a result holds that equals the two consults above it is no subtotal
            {"consult_fee": 40.0, "visits": 2, "scan": 80.0, "dressing": 12.0, "parking": 3.0},
            [("Consult (Mon)", "$40.00"), ("Consult (Thu)", "$40.00"), ("Ultrasound", "$80.00")]
            + [("Dressing", "$12.00"), ("Parking", "$3.00")],
            "175.00",
            "95.00",
        ),
    ],
)
def test_a_subtotal_is_a_row_the_answer_made_and_only_the_last_is_carried(
    result: Any, rows: list[tuple[str, str]], right: str, wrong: str
) -> None:
    """Only a row the answer worked out is a subtotal, and a total carries the last one with the rows
    after it: an earlier subtotal counted again, or rows dropped for an item that equals them, are
    flagged."""
    table = "| Item | Price |\n|---|---|\n" + "".join(f"| {label} | {amount} |\n" for label, amount in rows)
    assert flagged(run(table + f"| **Total** | **${right}** |", result)) == []
    assert flagged(run(table + f"| **Total** | **${wrong}** |", result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "wrong"),
    [
        (  # a gym: the card's share worked off the price before tax (right: 1,430.00)
            {"subtotal": 1500.0, "tax": 180.0, "total": 1680.0, "voucher": {"id": "GV-12", "balance": 250.0}},
            "Your annual plan is $1,500.00 plus $180.00 tax, $1,680.00 in all.\n\n**Payment:**\n"
            "- Voucher GV-12: $250.00\n- Card: $1,250.00",
            "1,250.00",
        ),
        (  # a dance studio: a price list is no split of the credit before it (Spin is $30)
            {"credit": 80.0, "classes": [{"name": "Yoga", "price": 20.0}, {"name": "Spin", "price": 30.0}]}
            | {"extra": {"name": "Pilates", "price": 25.0}},
            "You have $80.00 of credit.\n\nThis week's classes:\n- Yoga: $20.00\n- Pilates: $25.00\n"
            "- Spin: $35.00",
            "35.00",
        ),
    ],
)
def test_a_list_is_no_split_of_an_amount_further_back_or_of_one_nothing_pays(
    result: Any, answer: str, wrong: str
) -> None:
    """Only the amount stated last before the list, paid or split, is its total: a share worked off a
    subtotal before it, or a price list after a balance, is flagged."""
    assert wrong in flagged(run(answer, result))


def test_a_groups_total_is_not_carried_into_the_next_groups_total() -> None:
    """A total carries on a subtotal, never one group's total into the next group's: trip B's total
    of 290 that adds trip A's 150 to its own rows is flagged."""
    legs = {"legs": [{"leg": "A1", "price": 100}, {"leg": "A2", "price": 50}, {"leg": "B1", "price": 80}]}
    table = "| Item | Price |\n|---|---|\n| Flight A | $100.00 |\n| Hotel A | $50.00 |\n"
    table += "| Total (trip A) | $150.00 |\n| Flight B | $80.00 |\n| Hotel B | $60.00 |\n"
    table += "| Total (trip B) | $290.00 |"
    assert "290.00" in flagged(run(table, legs))


def test_a_tables_column_is_not_summed_across_a_break() -> None:
    """Rows of an earlier table, a blank line above, are no part of the next table's column."""
    first = "| Item | Each | Total |\n|---|---|---|\n| Chairs | $2.25 | $270.00 |\n\n"
    second = "| Item | Each | Total |\n|---|---|---|\n| Tables | $11.00 | $165.00 |\n"
    second += "| Tent | $640.00 | $640.00 |\n"
    assert flagged(run(first + second + "| **Total** | | **$1,075.00** |", QUOTE)) == ["1,075.00"]


# --- differences --------------------------------------------------------------------------


def test_a_refund_that_is_the_price_paid_less_the_new_price_is_a_difference() -> None:
    """Paid 567, new flights 255: a refund of $312 is computed; $322 is not."""
    answer = "The new flights HAT136 and HAT039 total $255. You paid $567, so you get a refund of $312."
    result = run(answer, RESERVATION, SEARCH)
    assert computed(result)["312"]["kind"] == "difference"
    wrong = run(answer.replace("$312", "$322"), RESERVATION, SEARCH)
    assert flagged(wrong) == ["322"]


def test_a_difference_needs_a_sentence_that_says_what_remains() -> None:
    """The same 312 said as a fare ("costs $312") is not a refund: flagged."""
    answer = "The new flights HAT136 and HAT039 total $255. The fare costs $312."
    assert flagged(run(answer, RESERVATION, SEARCH)) == ["312"]


def test_two_amounts_only_read_are_paired_within_one_result_never_across() -> None:
    """567 − 53 = 514 within the reservation is a difference; 400 − 53 = 347 pairs a search's
    price with the reservation's and is flagged."""
    assert computed(run("The difference is $514.", RESERVATION))["514"]["kind"] == "difference"
    assert flagged(run("The difference is $347.", RESERVATION, SEARCH)) == ["347"]


def test_a_total_less_what_is_listed_after_it_is_computed() -> None:
    """ "Total: $833, Certificate: $500, Gift card: $327, Remaining: $6" leaves 6."""
    answer = "- Total: $833\n- Certificate: $500\n- Gift card: $327\n- Remaining on card: $6"
    result = run(answer, {"total": 833, "certificate": 500, "gift_card": 327})
    assert computed(result)["6"] == {
        "kind": "total-less",
        "from": "833 − 500 − 327",
        "operands": computed(result)["6"]["operands"],
    }
    wrong = answer.replace("$6", "$16")
    assert flagged(run(wrong, {"total": 833, "certificate": 500, "gift_card": 327})) == ["16"]


# --- products -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        # A laundromat's card: a row's charges over its loads.
        (
            {"card": "LC-220", "visits": [{"day": "Mon", "loads": 6, "charged": 27.0}]},
            "Monday came to ${} per load.",
            "4.50",
            "4.75",
        ),
        # A spice wholesaler: an order's price over its weight in kilograms.
        ({"order": "SP-9", "weight_kg": 2.5, "price": 31.25}, "That works out to €{}/kg.", "12.50", "13.50"),
    ],
)
def test_an_amount_per_a_unit_is_a_rows_money_over_its_count_of_that_unit(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """ "$4.50 per load" is the row's money over the loads it counts; a rate it does not give, or one
    per a unit no member of the row counts, stays flagged."""
    found = computed(run(answer.format(right), result))[right]
    assert found["kind"] == "unit-rate"
    assert flagged(run(answer.format(wrong), result)) == [wrong]
    assert flagged(run(answer.format(right).replace("load", "hour").replace("kg", "day"), result)) == [right]


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        # A fuel log: an average over the fills is no one fill's price, whichever it matches.
        (
            {
                "fills": [
                    {"station": "North", "gallons": 10, "cost": 32.5},
                    {"station": "East", "gallons": 12, "cost": 37.2},
                ]
            },
            "Across May your average price was $3.25/gal.",
        ),
        # Of several rows, only the one the sentence names: Tuesday's is not Monday's.
        (
            {
                "visits": [
                    {"day": "Mon", "loads": 6, "charged": 27.0},
                    {"day": "Tue", "loads": 5, "charged": 25.0},
                ]
            },
            "Tuesday came to $4.50 per load.",
        ),
        # A row's name is no count of it, a tax no price, and "per" no word of a unit.
        ({"item_id": 12, "price": 54}, "That works out to $4.50 per item."),
        ({"nights": 3, "tax": 45, "total": 495}, "The tax is $15.00 per night."),
        ({"percent_off": 10, "total": 240}, "That is $24.00 per person."),
    ],
)
def test_a_rate_per_unit_comes_from_one_named_row_of_prices_and_counts(
    result: dict[str, Any], answer: str
) -> None:
    assert flagged(run(answer, result)) == [answer.split("$")[1].split("/")[0].split(" ")[0]]


def test_a_price_times_the_passengers_the_user_named_is_a_product() -> None:
    """Three passengers at $152: $456 for 3 passengers is computed."""
    result = run("The total for 3 passengers is $456.", SEARCH, user="Book HAT136 for 3 passengers.")
    assert computed(result)["456"]["kind"] == "product"


def test_a_total_for_three_is_not_explained_by_one_persons_sum() -> None:
    """$255 is one passenger's two legs; said "for 3 passengers" it is flagged."""
    answer = "Flights HAT136 and HAT039: the total for 3 passengers is $255."
    assert flagged(run(answer, SEARCH, user="We are 3 passengers.")) == ["255"]


def test_a_product_with_a_count_nobody_gave_is_flagged() -> None:
    """$608 is 152 × 4, but nobody said four: flagged."""
    assert flagged(run("For 4 passengers it is $608.", SEARCH, user="How much?")) == ["608"]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        (
            "Consignors receive 60% of the sale price.",
            {"item": "wool coat", "sale_price": 85.0},
            "The wool coat sold for $85.00, so your share is ${}.",
            "51.00",
            "53.00",
        ),
        (
            "Annual plans get a 15% discount.",
            {"plan": "annual", "list_price": 480.0},
            "The annual plan lists at $480.00; with the discount you pay ${}.",
            "408.00",
            "418.00",
        ),
    ],
)
def test_a_percentage_the_prompt_states_applies_to_an_amount(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """The prompt's rate of an amount read, or the amount less it, is computed; another amount is
    flagged, and without the prompt's rate the right one is too."""

    def judged(text: str, system: str = prompt) -> dict[str, Any]:
        return run_with_prompt(text, result, system)

    assert computed(judged(answer.format(right)))[right]["kind"] == "rate"
    assert flagged(judged(answer.format(wrong))) == [wrong]
    assert flagged(judged(answer.format(right), "You help customers.")) == [right]


# --- dates --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        # a university registrar: next year's term
        (
            "You help students register. Today is Monday, 2025-11-10.",
            {"course": "CHEM 310", "sections": []},
            "No open sections of CHEM 310 were found for Spring {}.",
            "2026",
            "2027",
        ),
        # a golf club: last year's vouchers, before the new ones; a second date of the same year
        (
            "You run bookings for the club. Today is Friday, 2026-01-09. Vouchers lapse on March 31.",
            {"member": "WH-118", "vouchers_left": 0},
            "Your vouchers from {} are used up; the new ones are on your account.",
            "2025",
            "2023",
        ),
    ],
)
def test_a_year_next_to_the_prompts_is_the_desks_calendar(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A year written alone, the one before or after the prompt's date's, is explained by it; a
    year further off, or with no date in the prompt, is not."""
    assert flagged(run_with_prompt(answer.format(right), result, prompt)) == []
    assert flagged(run_with_prompt(answer.format(wrong), result, prompt)) == [wrong]
    assert flagged(run_with_prompt(answer.format(right), result, "You help customers.")) == [right]


@pytest.mark.parametrize(
    "answer",
    [
        "Your member number is 2026.",  # a gym: an identifier
        "The warehouse holds 2026 pallets this week.",  # a warehouse: a count
    ],
)
def test_a_number_that_names_no_year_is_no_year(answer: str) -> None:
    """Four figures next to the prompt's year, written with no word of a year around them, are no
    year of the desk's calendar."""
    found = run_with_prompt(
        answer, {"member": "WH-118", "pallets": 12}, "You help members. Today is 2025-11-10."
    )
    assert flagged(found) == ["2026"]


def test_a_date_moved_by_the_days_the_user_asked_for_is_a_date_shift() -> None:
    """The user asks for "the day after"; 2024-05-27 is 2024-05-26 moved one day, 2024-05-29
    (two days) is flagged."""
    user = "Move my flight to the day after."
    result = run("Your new date is 2024-05-27.", RESERVATION, user=user)
    assert computed(result)["2024-05-27"]["kind"] == "date-shift"
    assert flagged(run("Your new date is 2024-05-30.", RESERVATION, user=user)) == ["2024-05-30"]


@pytest.mark.parametrize(
    ("prompt", "user", "result", "answer", "right", "wrong"),
    [
        (
            "Held books are shelved the day after they arrive.",
            "When can I pick up my hold?",
            {"hold": "H-221", "arrives": "2026-02-03"},
            "It will be on the shelf on {}.",
            "2026-02-04",
            "2026-02-05",
        ),
        (
            "Dogs are bathed the day before they go home.",
            "When is Rex bathed?",
            {"dog": "Rex", "pickup": "March 9, 2027"},
            "Rex gets his bath on {}.",
            "March 8, 2027",
            "March 7, 2027",
        ),
    ],
)
def test_a_date_moved_by_the_days_the_system_prompt_states_is_a_date_shift(
    prompt: str, user: str, result: dict[str, str], answer: str, right: str, wrong: str
) -> None:
    """The prompt's policy moves a date as the user's words do ("the day before"); another
    day is flagged."""

    def judged(day: str) -> dict[str, Any]:
        turn = build_turn(answer.format(day), calls=[{"tool": "lookup", "result": result}], user=user)
        return run_suite(build_conversation(turn) | {"system": prompt})

    assert computed(judged(right))[right]["kind"] == "date-shift"
    assert flagged(judged(wrong)) == [wrong]


@pytest.mark.parametrize(
    ("prompt", "tool", "answer", "right", "wrong"),
    [
        ("Today is Monday, 2025-09-08.", "find_slots", "Nothing is free on {}.", "2025-09-10", "2025-09-12"),
        (
            "The date is 2031-01-02 (a Thursday).",
            "count_stock",
            "The next delivery is {}.",
            "January 6",
            "January 7",
        ),
    ],
)
def test_a_day_of_the_week_the_user_names_is_the_next_such_date(
    prompt: str, tool: str, answer: str, right: str, wrong: str
) -> None:
    """ "Wednesday" after a Monday the prompt dates is two days on, with or without the year
    written; a date that is no Wednesday (nor the user's day) is flagged."""
    user = "What about Wednesday?" if tool == "find_slots" else "Is anything due Monday?"

    def judged(date: str) -> dict[str, Any]:
        turn = build_turn(answer.format(date), calls=[{"tool": tool, "result": {"rows": []}}], user=user)
        return run_suite(build_conversation(turn) | {"system": prompt})

    assert computed(judged(right))[right]["kind"] == "date-shift"
    assert flagged(judged(wrong)) == [wrong]


def test_a_named_weekday_is_the_next_one_unless_the_user_says_next() -> None:
    """A week on from the next Wednesday is flagged, unless the user asked for "next Wednesday";
    a weekday by the calendar's first day moves nothing past its edge."""

    def judged(user: str, answer: str, prompt: str = "Today is Monday, 2025-09-08.") -> dict[str, Any]:
        turn = build_turn(answer, calls=[{"tool": "find_slots", "result": {"rows": []}}], user=user)
        return run_suite(build_conversation(turn) | {"system": prompt})

    assert flagged(judged("What about Wednesday?", "Nothing is free on 2025-09-17.")) == ["2025-09-17"]
    assert flagged(judged("What about next Wednesday?", "Nothing is free on 2025-09-17.")) == []
    assert flagged(judged("Is Monday free?", "Nothing on 0001-01-01.", "Day one is 0001-01-01.")) == []


# --- what a later answer restates -------------------------------------------------------


def test_a_figure_an_earlier_answer_computed_is_explained_when_restated() -> None:
    """Turn 0 sums $152 + $103 = $255; turn 1 restates $255 with no tool call."""
    first = build_turn("Price: $152 + $103 = $255.", calls=[{"tool": "search", "result": SEARCH}])
    second = build_turn("To confirm: the total is $255.", calls=[], user="Yes, book it.")
    result = run_suite(build_conversation(first, second))
    assert [f["code"] for f in result["findings"] if f["turn"] == 1 and f["severity"] == "flag"] == []


def test_the_legs_named_times_the_passengers_is_a_product() -> None:
    """HAT136 and HAT039 at 152 + 103 in economy, for 3 passengers: $765."""
    answer = "Flights HAT136 and HAT039 in economy for 3 passengers: total $765."
    result = run(answer, SEARCH, user="We are 3 passengers.")
    assert computed(result)["765"]["kind"] == "product"
    assert flagged(run(answer.replace("$765", "$775"), SEARCH, user="We are 3 passengers.")) == ["775"]


def test_a_result_read_for_arithmetic_can_still_have_its_lists_counted() -> None:
    """The lengths arithmetic reads from a result and the count keys of its lists are two
    things cached on one source: an answer with a figure to explain, then one that counts
    a noun of the same result, checks both (the second crashed on the first's cache)."""
    result = {
        "flights": [{"flight_number": "HAT001", "price": 100}, {"flight_number": "HAT002", "price": 50}]
    }
    report = run_suite(
        build_conversation(
            build_turn("The total comes to $999.", calls=[{"tool": "get_trip", "result": result}]),
            build_turn("Your trip has 2 flights.", user="How many flights?"),
        )
    )
    assert [f["turn"] for f in report["turns"]] == [0, 1]
    assert any(f["turn"] == 0 and f["value"] == "999" for f in report["findings"] if "value" in f)


# --- a total of the figures labelled as it is -----------------------------------------------
# Two unrelated desks: a clinic's invoices and a workshop's repair orders.

CLINIC = {
    "visits": [
        {"visit": "V-1", "list": 120.40, "paid": 95.15},
        {"visit": "V-2", "list": 80.00, "paid": 71.10},
    ]
}
WORKSHOP = {
    "jobs": [{"job": "J-7", "quote": 310.00, "final": 296.55}, {"job": "J-9", "quote": 42.50, "final": 45.75}]
}


def test_a_total_sums_the_figures_labelled_as_it_is_whatever_stands_between() -> None:
    """ "Total Saving" is the sum of the figures labelled "Saving", though each item's list
    and paid amounts stand between them; a total one cent off is still flagged."""
    clinic = (
        "1. V-1: List: $120.40, Paid: $95.15, Saving: $25.25\n"
        "2. V-2: List: $80.00, Paid: $71.10, Saving: $8.90\n\n"
        "**Total Saving:** ${}"
    )
    assert flagged(run(clinic.format("34.15"), CLINIC)) == []
    assert computed(run(clinic.format("34.15"), CLINIC))["34.15"]["kind"] == "sum"
    assert flagged(run(clinic.format("34.16"), CLINIC)) == ["34.16"]
    workshop = (
        "- J-7 was quoted $310.00 and came to $296.55 (difference: $13.45)\n"
        "- J-9 was quoted $42.50 and came to $45.75 (difference: $3.25)\n"
        "The total difference for these jobs is ${}."
    )
    assert flagged(run(workshop.format("16.70"), WORKSHOP)) == []
    assert flagged(run(workshop.format("16.71"), WORKSHOP)) == ["16.71"]


def test_figures_labelled_otherwise_are_no_terms_of_the_total() -> None:
    """Only the figures whose label ends as the total's does are summed: a "Total Saving"
    that adds one item's paid amount to the other's saving is flagged."""
    answer = (
        "1. V-1: List: $120.40, Paid: $95.15, Saving: $25.25\n"
        "2. V-2: List: $80.00, Paid: $71.10, Saving: $8.90\n\n"
        "**Total Saving:** $104.05"
    )
    assert flagged(run(answer, CLINIC)) == ["104.05"]


# --- a total of the figures the answer computed ----------------------------------------------
# Each on made-up records of two unrelated desks: a ticket office and a warehouse.


@pytest.mark.parametrize(
    ("answer", "record", "right", "wrong"),
    [
        (
            "The upgrade costs $12.00 ($52.00 - $40.00) for seat A and $8.50 ($30.50 - $22.00) for seat B, "
            "a total extra cost of $20.50.",
            {"fares": {"A": [52.0, 40.0], "B": [30.5, 22.0]}},
            "20.50",
            "112.50",
        ),
        (
            "Bin 3 is 14.54 USD (1917.21 - 1902.67) under its booked value, bin 9 is 0.42 USD "
            "(52.01 - 51.59) under.\n\nThe total shortfall is 14.96 USD.",
            {
                "bins": [
                    {"bin": 3, "booked": 1917.21, "counted": 1902.67},
                    {"bin": 9, "booked": 52.01, "counted": 51.59},
                ]
            },
            "14.96",
            "15.96",
        ),
    ],
)
def test_a_total_of_the_figures_the_answer_computed_skips_their_operands(
    answer: str, record: dict[str, Any], right: str, wrong: str
) -> None:
    """Differences the answer worked out, then their total: the total sums the differences,
    not the amounts they were computed from; a total that is not their sum is flagged."""
    assert computed(run(answer, record))[right]["kind"] == "sum"
    assert flagged(run(answer.replace(right, wrong), record)) == [wrong]


@pytest.mark.parametrize(
    ("record", "answer", "right", "wrong"),
    [
        # A sign shop: the installation line shows its hours times the rate.
        (
            {"vinyl": 84.0, "install_hours": 2.5, "hourly_rate": 60.0, "permit_fee": 35.0},
            "- Vinyl: $84.00\n- Install: 2.5 h × $60.00 = $150.00\n- Permit: $35.00\n- Total: ${}",
            "269.00",
            "329.00",
        ),
        # A tutoring centre: the sessions line shows its count times the fee, in brackets after.
        (
            {"registration": 25.0, "sessions": 6, "session_fee": 42.5, "materials": 18.0},
            "- Registration: €25.00\n- Sessions: €255.00 (6 sessions × €42.50)\n- Materials: €18.00\n"
            "- **Total: €{}**",
            "298.00",
            "340.50",
        ),
        # A guest house: the nights line opens with its count, under a line of parking; a list's
        # dash is no minus, so the parking is a line of its own and a total without it is short.
        (
            {"parking": 20, "nights": 3, "nightly_rate": 100, "tax": 45},
            "- Parking: $20\n- 3 nights × $100 = $300\n- Tax: $45\n- Total: ${}",
            "365",
            "345",
        ),
        # The sign shop again, each line opening with its amount: the dashes sit between amounts.
        (
            {"vinyl": 84.0, "install_hours": 2.5, "hourly_rate": 60.0, "permit_fee": 35.0},
            "- $84.00 vinyl\n- 2.5 h × $60.00 = $150.00\n- $35.00 permit\n- Total: ${}",
            "269.00",
            "185.00",
        ),
    ],
)
def test_a_total_of_lines_sums_a_worked_lines_result_not_its_terms(
    record: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A line that shows its working is one line of the list: the total below sums its result,
    and neither the rate in its working (a total that adds it) nor the line above it (a total
    that leaves it out) is read as its term: either total is flagged."""
    found = run(answer.format(right), record)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "sum"
    assert wrong in flagged(run(answer.format(wrong), record))


@pytest.mark.parametrize(
    ("record", "answer"),
    [
        # A guest house's one-line bill: the dash before the nights parts two items.
        (
            {"parking": 20, "nights": 3, "nightly_rate": 100, "tax": 45, "towels": 8},
            "Parking $20 - 3 nights × $100 = $300, tax $45, towels $8, total ${}.",
        ),
        # A courier's one-line quote: the dash before the boxes parts two items.
        (
            {"pickup": 12, "boxes": 4, "per_box": 9.5, "fuel": 6, "tape": 1.25},
            "Pickup $12.00 - 4 boxes × $9.50 = $38.00, fuel $6.00, tape $1.25, total ${}.",
        ),
    ],
)
def test_arithmetic_that_does_not_give_its_figure_sets_no_term_aside(
    record: dict[str, Any], answer: str
) -> None:
    """A working read that does not give the figure after it is no working of it: its amounts
    stay items of the list, so a total that leaves one of them out is flagged."""
    short = {20: "353", 12: "45.25"}[next(iter(record.values()))]
    assert short in flagged(run(answer.format(short), record))


@pytest.mark.parametrize(
    ("record", "answer", "right", "wrong"),
    [
        # A ferry desk: the fare in the table, worked out in the list below it.
        (
            {"sailing": "08:15", "adult_fare": 21.0, "car_fare": 15.0, "adults": 2},
            "| Sailing | Fare |\n|---|---|\n| 08:15 | €{} |\n\nHow it adds up:\n\n"
            "- 08:15: 2 adults × €21.00 + €15.00 car = €{}",
            "57.00",
            "59.00",
        ),
        # A print shop: the order's price first, its working two paragraphs on.
        (
            {"order": "PR-31", "posters": 24, "unit_price": 3.6},
            "Your order comes to ${}.\n\nDelivery is free this week.\n\nYour order: 24 posters × $3.60 = ${}",
            "86.40",
            "88.40",
        ),
    ],
)
def test_a_figure_written_twice_is_explained_where_either_place_explains_it(
    record: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A figure the answer writes first and works out further on is explained by that working;
    written twice where the working gives another figure, it is flagged."""
    assert flagged(run(answer.format(right, right), record)) == []
    assert wrong in flagged(run(answer.format(wrong, wrong), record))


@pytest.mark.parametrize(
    ("record", "answer", "first"),
    [
        # A ticket desk: the refund and the bags' fee are two things that happen to match.
        (
            {"fare": 120, "bag_fee": 35, "bags": 2},
            "Your refund for R7 comes to $70.\n\nChecked bags: 2 × $35 = $70.",
            "70",
        ),
        # A stockroom: a write-off and a reorder's cost.
        (
            {"reorder_qty": 4, "unit_cost": 12.5, "written_off": 80},
            "Stock written off this month: $50.00. That clears bin C-9.\n\n"
            "Reorder for bin C-4: 4 × $12.50 = $50.00.",
            "50.00",
        ),
    ],
)
def test_a_working_of_the_same_value_on_a_line_about_something_else_explains_nothing(
    record: dict[str, Any], answer: str, first: str
) -> None:
    """The same value worked out on a line that names nothing the first place's line names is
    another figure that happens to match: the first stays flagged."""
    assert first in flagged(run(answer, record))


# --- figures written to the cent: their arithmetic holds whatever words surround them ----------

# Each result holds a row the answer leaves out: no sum of a whole list gives the figure.
BOX_OFFICE = {
    "seats": [
        {"seat": "B-12", "price": 48.25},
        {"seat": "B-13", "price": 48.25},
        {"seat": "C-1", "price": 31},
    ]
}
STOCKROOM = {
    "bins": [
        {"part": "hex bolt", "cost": 3.15},
        {"part": "washer", "cost": 1.05},
        {"part": "nut", "cost": 0.6},
    ]
}


@pytest.mark.parametrize(
    ("answer", "result", "figure"),
    [
        ("- Seat B-12: $48.25\n- Seat B-13: $48.25\n- Amount charged: $96.50", BOX_OFFICE, "96.50"),
        ("- Hex bolt: $3.15\n- Washer: $1.05\n- Reorder cost: $4.20", STOCKROOM, "4.20"),
    ],
)
def test_a_figure_to_the_cent_after_the_amounts_it_adds_up_is_their_sum(
    answer: str, result: dict[str, Any], figure: str
) -> None:
    """No "total" in its label: a run of amounts that agrees to the cent is no coincidence."""
    found = run(answer, result)
    assert flagged(found) == []
    assert computed(found)[figure]["kind"] == "sum"


def test_a_whole_figure_after_amounts_still_needs_a_total_word() -> None:
    """Whole numbers add up by chance often: without "total" the run does not explain them."""
    bins = {
        "bins": [{"part": "hex bolt", "cost": 3}, {"part": "washer", "cost": 1}, {"part": "nut", "cost": 7}]
    }
    assert flagged(run("- Hex bolt: $3\n- Washer: $1\n- Reorder cost: $4", bins)) == ["4"]
    # Written with cents, a round amount is as likely a coincidence.
    assert flagged(run("- Hex bolt: $3.00\n- Washer: $1.00\n- Reorder cost: $4.00", bins)) == ["4.00"]


def _acted_on(tool: str, args: dict[str, Any], result: dict[str, Any], answer: str) -> dict[str, Any]:
    turn = build_turn(answer, calls=[{"tool": tool, "args": args, "result": result}])
    return run_suite(build_conversation(turn))


@pytest.mark.parametrize(
    ("tool", "args", "result", "right", "wrong"),
    [
        (
            "release_seats",
            {"seat_ids": ["S-1", "S-3"]},
            {
                "seats": [
                    {"id": "S-1", "fare": 40.5},
                    {"id": "S-2", "fare": 35.25},
                    {"id": "S-3", "fare": 22.75},
                ]
            },
            "63.25",
            "75.75",
        ),
        (
            "return_parts",
            {"order": "PO-7", "part_ids": ["P-2", "P-3"]},
            {"parts": [{"id": "P-1", "cost": 12.4}, {"id": "P-2", "cost": 7.1}, {"id": "P-3", "cost": 3.35}]},
            "10.45",
            "19.50",
        ),
    ],
)
def test_an_amount_over_the_rows_a_call_names_is_their_sum(
    tool: str, args: dict[str, Any], result: dict[str, Any], right: str, wrong: str
) -> None:
    """The rows a write was asked to act on (its arguments name them) sum to what it moved;
    two rows it did not name together are no such group."""
    found = _acted_on(tool, args, result, f"Done: ${right} will be credited to your account.")
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "column-sum"
    assert flagged(_acted_on(tool, args, result, f"Done: ${wrong} will be credited to your account.")) == [
        wrong
    ]


@pytest.mark.parametrize(
    ("result", "answer", "figure"),
    [
        (
            {"plans": {"basic": {"price": 29.99}, "premium": {"price": 44.49}}},
            "Premium costs $14.50 more.",
            None,
        ),
        (
            {"plans": {"basic": {"price": 29.99}, "premium": {"price": 44.49}}},
            "The upgrade is $14.50 a month.",
            "14.50",
        ),
        (
            {"pallet": {"cost": 118.4}, "crate": {"cost": 96.15}},
            "Switching to a crate costs $22.25 per load.",
            "22.25",
        ),
    ],
)
def test_a_difference_to_the_cent_needs_no_word_of_remainder(
    result: dict[str, Any], answer: str, figure: str | None
) -> None:
    """Two amounts read whose difference is the figure to the cent explain it, said or not."""
    found = run(answer, result)
    assert flagged(found) == []
    assert computed(found)[figure or "14.50"]["kind"] == "difference"


def test_a_whole_difference_still_needs_a_word_of_remainder() -> None:
    plans = {"plans": {"basic": {"price": 30}, "premium": {"price": 45}}}
    assert flagged(run("The upgrade is $15 a month.", plans)) == ["15"]
    assert flagged(run("Premium costs $15 more.", plans)) == []


# --- a weight or distance in the other system's unit ----------------------------------------


@pytest.mark.parametrize(
    ("result", "answer", "spelled"),
    [
        ({"crate_id": "CR-2231", "weight_lb": 1850}, "The crate weighs 1,850 lb (about 839 kg).", "839 kg"),
        ({"sample": "S-19", "mass_kg": 14.5}, "The sample is 14.5 kg, about 32 lbs.", "32 lbs"),
        ({"trail": "Ridge loop", "length_km": 12.4}, "The loop is 12.4 km, or 7.7 miles.", "7.7 miles"),
        ({"bolt": "B-7", "length_in": 3}, "The bolt is 3 in long (7.62 cm).", "7.62 cm"),
    ],
)
def test_a_weight_or_distance_converted_to_the_other_systems_unit_is_computed(
    result: dict[str, Any], answer: str, spelled: str
) -> None:
    """A figure in pounds, kilograms, miles, kilometres, inches or centimetres converts a number
    a record carries in the other system's unit of like size, to the figure's last digit."""
    found = run(answer, result)
    assert flagged(found) == []
    assert computed(found)[spelled]["kind"] == "unit-scale"


def test_a_converted_figure_needs_its_unit_and_its_digits() -> None:
    """The same number in the record's own unit, in a unit of another measure, or a few units
    off, is flagged."""
    crate = {"crate_id": "CR-2231", "weight_lb": 1850}
    assert flagged(run("The crate weighs about 839 kg.", crate)) == []
    assert flagged(run("The crate weighs about 845 kg.", crate)) == ["845 kg"]
    assert flagged(run("The crate weighs about 839 lb.", crate)) == ["839 lb"]
    assert flagged(run("The crate is 839 km away.", crate)) == ["839 km"]


@pytest.mark.parametrize(
    ("user", "result", "answer", "right", "wrong"),
    [
        # A weight the user gave, restated in the sentence that converts it.
        (
            "We'd like about 20 lb of plums.",
            {"plums": {"price_per_lb": 1.5}},
            "20 lb is about {}.",
            "9.07 kg",
            "9.7 kg",
        ),
        # A distance the answer computed (a column's sum), restated.
        (
            "How long is the route?",
            {"legs": [{"leg": "A", "km": 4}, {"leg": "B", "km": 8}]},
            "The two legs total 12 km (about {}).",
            "7.5 miles",
            "8.5 miles",
        ),
    ],
)
def test_a_measure_restating_a_figure_its_sentence_writes_in_the_other_unit_is_computed(
    user: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A figure the user gave or the answer computed, converted in its own sentence, is computed;
    the conversion a few units off is flagged."""
    assert computed(run(answer.format(right), result, user=user))[right]["kind"] == "restated"
    assert flagged(run(answer.format(wrong), result, user=user)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        ({"greenhouse": "GH-2", "max_temp_c": 24}, "Bay GH-2 peaked at {} today.", "75°F", "79°F"),
        ({"freezer": "FZ-9", "setpoint_f": 5}, "Freezer FZ-9 is set to −{} (5 °F).", "15 °C", "12 °C"),
        ({"freezer": "FZ-9", "reading_c": -2}, "The cold room reads {}.", "28.4 °F", "35.6 °F"),
    ],
)
def test_a_temperature_in_the_other_scale_is_computed_in_any_notation(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A temperature converts a record's reading (below zero too) between Celsius and Fahrenheit,
    glued to its degrees or spaced from them alike; a few degrees off is flagged."""
    for spelled in (right, right.replace(" °", "°") if " °" in right else right.replace("°", " °")):
        found = run(answer.format(spelled), result)
        assert computed(found)[spelled]["kind"] in ("unit-scale", "restated")
        assert flagged(found) == []
    assert flagged(run(answer.format(wrong), result)) == [wrong]


def test_a_temperature_is_checked_however_it_is_spaced() -> None:
    """A made-up temperature is flagged written glued or spaced; one the user typed without its
    degree sign ("31C") grounds the answer's "31 °C", which grounds its restatement in Fahrenheit."""
    stock = {"pallet": "PL-4", "status": "stored"}
    for spelled in ("8°C", "8 °C", "46°F", "46 °F"):
        assert flagged(run(f"Pallet PL-4 is held at {spelled}.", stock)) == [spelled]
    found = run("Noted: 31 °C inside (87.8 °F).", stock, user="the lab reads 31C right now")
    assert flagged(found) == []
    # Only a member named for a temperature converts: no wind speed, no wattage in thousands.
    assert flagged(run("Tomorrow's high will be 75°F.", {"high_c": 18, "wind_kph": 24})) == ["75°F"]
    assert flagged(run("The fridge runs at 2.4°C.", {"fridge": "F-2", "watts": 2400})) == ["2.4°C"]


def test_two_made_up_measures_do_not_vouch_for_each_other() -> None:
    """Neither of two figures nothing grounds is explained by being the other converted; nor is a
    measure the restatement of a figure that only shares an explained amount's number."""
    found = run("The parcel weighs 30 lb (13.6 kg).", {"parcel": "P-1", "status": "in transit"})
    assert flagged(found) == ["30 lb", "13.6 kg"]
    items = {"items": [{"sku": "A", "price": 5}, {"sku": "B", "price": 7}]}
    found = run("The items total $12. The depot is 12 km away, about 7.5 miles.", items)
    assert "7.5 miles" in flagged(found)


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        # A print queue: a product in seconds, restated in hours and minutes.
        (
            {"job": "PJ-31", "copies": 80, "seconds_per_copy": 312},
            "80 copies at 312 s each is 24,960 s, about {} of printing.",
            "6 h 56 min",
            "7 h 56 min",
        ),
        # A field-service shift: a limit less the time a record holds.
        (
            {"technician": "T-12", "worked_min": 215, "policy": "a 9 h day"},
            "T-12 has worked 215 min today. Against the 9 h day that leaves {}.",
            "5 h 25 min",
            "5 h 45 min",
        ),
        # A call centre: a handling time a record holds, times the calls the sentence counts.
        (
            {"queue": "Q-7", "handle_seconds": 240},
            "At 240 s a call, the 840 calls took {} of agent time.",
            "3,360 min",
            "3,400 min",
        ),
        # A laundry: minutes a cycle a record holds, over the cycles the sentence counts.
        (
            {"machine": "W-3", "idle_minutes": 45},
            "At 45 minutes idle on each of its 21 cycles, that adds up to {}.",
            "15 h 45 min",
            "16 h 45 min",
        ),
        # A kiln: two firings a record holds, added.
        (
            {"kiln": "K-2", "firings": [{"id": "F-1", "minutes": 150}, {"id": "F-2", "minutes": 105}]},
            "F-1 took 2 h 30 min and F-2 1 h 45 min: {} of firing in all.",
            "4 h 15 min",
            "4 h 45 min",
        ),
    ],
)
def test_a_length_its_sentences_lengths_give_is_computed(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A length one sum or difference of the lengths its sentence writes gives, or that restates
    one in other units to its last written unit, is computed; one the arithmetic misses is flagged."""
    assert computed(run(answer.format(right), result))[right]["kind"] in ("restated", "sentence-arithmetic")
    assert flagged(run(answer.format(wrong), result)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        # A recording studio's session log: a table's total row over the lengths above it.
        (
            {
                "sessions": [
                    {"id": "S1", "minutes": 95},
                    {"id": "S2", "minutes": 50},
                    {"id": "S3", "minutes": 125},
                ]
            },
            "| Session | Length |\n|---|---|\n| S1 | 1 h 35 min |\n| S2 | 50 min |\n| S3 | 2 h 5 min |\n"
            "| **Total** | **{}** |",
            "4 h 30 min",
            "4 h 50 min",
        ),
        # A hiking guide: the legs of a route, then their total in prose.
        (
            {"route": "R-9", "legs": [{"leg": "A", "minutes": 80}, {"leg": "B", "minutes": 45}]},
            "Leg A is 1 h 20 min.\n\nLeg B is 45 min.\n\nThat is {} of walking in total.",
            "2 h 5 min",
            "2 h 25 min",
        ),
    ],
)
def test_a_length_labelled_a_total_sums_the_lengths_written_before_it(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A total of lengths is the sum of the last lengths the answer writes before it, each one
    grounded; a total they do not give stays flagged."""
    assert computed(run(answer.format(right), result))[right]["kind"] == "length-sum"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


def test_a_total_of_lengths_sums_a_whole_run_and_a_grand_total_the_totals_before_it() -> None:
    """As a total of amounts: the run since a break, never its tail, and a grand total over the
    totals before it, never their parts again. A climbing gym's route log and a tutor's two days."""
    legs = {
        "route": "R-9",
        "legs": [{"leg": "A", "minutes": 80}, {"leg": "B", "minutes": 45}, {"leg": "C", "minutes": 30}],
    }
    listed = "- Leg A: 1 h 20 min\n- Leg B: 45 min\n- Leg C: 30 min\n\nThat is {} of climbing in total."
    assert flagged(run(listed.format("2 h 35 min"), legs)) == []
    assert flagged(run(listed.format("1 h 15 min"), legs)) == ["1 h 15 min"]  # the last two alone
    assert flagged(run(listed.format("1 hour"), legs)) == ["1 hour"]
    days = {"tutor": "T-2", "sessions": [{"minutes": m} for m in (50, 65, 40, 35, 115, 75)]}
    two_days = (
        "Day 1: 50 min, then 1 h 5 min, 1 h 55 min in total.\n"
        "Day 2: 40 min, then 35 min, 1 h 15 min in total.\nGrand total: {}"
    )
    assert computed(run(two_days.format("3 h 10 min"), days))["3 h 10 min"]["kind"] == "length-sum"
    assert flagged(run(two_days.format("6 h 20 min"), days)) == ["6 h 20 min"]


def test_lengths_only_the_answer_writes_do_not_explain_one_another() -> None:
    """Made-up lengths never vouch for each other: neither a restatement (one value, judged once)
    nor a sum of them."""
    found = run("The crossing takes 90 minutes (1 h 30 min).", {"route": "R-3", "status": "open"})
    assert flagged(found) == ["90 minutes"]
    found = run("Setup takes 2 hours and cleanup 1 hour, 3 hours in all.", {"room": "B-2", "free": True})
    assert flagged(found) == ["2 hours", "1 hour", "3 hours"]


def test_a_length_only_near_another_is_no_restatement_nor_a_sum_of_them() -> None:
    """A restatement stands right after what it restates, and a made-up short figure ("1.5 h") is
    no operand; a coarse length ("2 hours", "3 hours") is no sum within half its unit."""
    found = run("The crossing takes 90 minutes (1.5 h).", {"route": "R-3", "status": "open"})
    assert flagged(found) == ["90 minutes"]
    legs = {"flight_min": 130, "drive_min": 45, "layover_min": 95}
    assert flagged(run("The flight takes 130 minutes; the layover is 2 hours.", legs)) == ["2 hours"]
    found = run("The flight takes 130 minutes and the drive 45 minutes; the layover is 3 hours.", legs)
    assert flagged(found) == ["3 hours"]


def test_a_small_whole_count_of_a_unit_is_no_product_of_a_length() -> None:
    """Small numbers multiply to small whole counts by chance: "10 days" is no 2 days times 5."""
    found = run("Bay 5 holds it for 2 days; the full hold is 10 days.", {"bay": 5, "hold_days": 2})
    assert flagged(found) == ["10 days"]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        # A kayak rental: the start written (and held), its length held by the record.
        (
            "",
            {"boat": "K-4", "start": "10:30", "rental_hours": 2},
            "Your rental from 10:30 AM ends at {}.",
            "12:30 PM",
            "1:30 PM",
        ),
        # A lab run: the start written, its length held by the record.
        (
            "",
            {"run": "R-7", "start": "14:10", "run_minutes": 95},
            "The run starts at 2:10 PM and finishes at {}.",
            "3:45 PM",
            "3:55 PM",
        ),
        # A ferry: the departure written, the closing time before it stated by the prompt.
        (
            "Boarding closes 20 minutes before departure.",
            {"sailing": "S-2", "departs": "08:15"},
            "It departs at 8:15 AM; boarding closes at {}.",
            "7:55 AM",
            "7:45 AM",
        ),
    ],
)
def test_a_clock_time_moved_by_a_length_is_computed(
    prompt: str, result: Any, answer: str, right: str, wrong: str
) -> None:
    """A time written moved on or back by a length held or stated (or a time held by a length
    written); a time no such move gives is flagged."""
    turn = build_turn(answer.format(right), calls=[{"tool": "lookup", "result": result}])
    found = run_suite(build_conversation(turn) | {"system": prompt})
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "time-offset"
    turn = build_turn(answer.format(wrong), calls=[{"tool": "lookup", "result": result}])
    assert flagged(run_suite(build_conversation(turn) | {"system": prompt})) == [wrong]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        (
            "Today is Monday, 2030-05-06. The current time is 10:15.",
            {"order": "B-12", "ready_at": "11:00"},
            "Your order will be ready at 11:00, {} from now.",
            "45 minutes",
            "55 minutes",
        ),
        (
            "It is 16:40 on 2030-05-06.",
            {"ticket": "T-4", "opened": "2030-05-06", "opened_time": "09:10"},
            "The ticket was opened at 9:10 AM, {} ago.",
            "7.5 hours",
            "8.5 hours",
        ),
        # A record of one later date holds its times on that day.
        (
            "Today is Monday, 2030-05-06. The current time is 09:40.",
            {"visit": "V-31", "date": "2030-05-08", "start": "08:00"},
            "Your inspection is on Wednesday at 8:00 AM, {} from now.",
            "46 hours 20 minutes",
            "22 hours 20 minutes",
        ),
        (
            "It is 13:30 on 2031-11-05.",
            {"batch": "K-9", "ready_at": "2031-11-07T06:00"},
            "The glaze batch is ready Friday at 06:00, in {}.",
            "40.5 hours",
            "16.5 hours",
        ),
        # Where the prompt writes several clock times, the first, in its date's sentence or the next,
        # is now: the later ones are the desk's hours.
        (
            "Today is Friday, 2031-01-16. The current time is 10:40. Rush jobs are ready by 17:00.",
            {"job": "SG-14", "ready_by": "17:00"},
            "Job SG-14 will be ready at 5:00 PM, about {} from now.",
            "6 h 20 min",
            "6 h 40 min",
        ),
        (
            "It is 08:15 on 2030-03-02. The reading room closes at 18:00; late returns are due by 20:00.",
            {"request": "R-7", "pickup": "09:45"},
            "Your request R-7 can be picked up at 9:45, {} from now.",
            "an hour and a half",
            "45 minutes",
        ),
    ],
)
def test_a_length_runs_from_the_prompts_time_now_to_a_time_a_record_holds(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """The prompt's clock time is now: a length to (or back from) a time a record of today holds, or
    to one a record of one later date holds, is elapsed; another length (the clock's alone) is
    flagged."""
    call = {"tool": "lookup", "result": result}
    assert computed(dated(prompt, answer.format(right), call))[right]["kind"] == "elapsed"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


def test_no_time_is_now_where_the_prompts_first_time_stands_apart_from_its_date() -> None:
    """A desk's hours written before its date are no time now: nothing runs from them."""
    prompt = "We open at 09:00 and close at 17:00. Be polite. Today is 2031-01-16."
    call = {"tool": "lookup", "result": {"job": "SG-14", "ready_by": "11:00"}}
    assert flagged(dated(prompt, "Job SG-14 will be ready at 11:00, 2 hours from now.", call)) == ["2 hours"]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        (
            "Today is 2031-08-09 and the time is 14:10 BST (UTC+1). Historian timestamps are in UTC.",
            {"entry_id": "LOG-7", "timestamp": "2031-08-09T13:14:22Z"},
            "Logged as LOG-7 at {} BST.",
            "14:14",
            "15:14",
        ),
        (
            "Today is Monday, 2031-02-10, 10:05 EST (UTC−5).",
            {"container": "MRKU-1", "discharged_at": "2031-02-06T21:40:00Z"},
            "MRKU-1 was discharged on Thursday at {} EST.",
            "4:40 PM",
            "5:40 PM",
        ),
    ],
)
def test_a_time_a_record_holds_on_the_clock_of_the_prompts_zone_is_computed(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A record's time moved by the UTC offset the prompt states is the same moment on the desk's
    clock; another time, or the same one where no offset is stated, is flagged."""
    call = {"tool": "lookup", "result": result}
    assert computed(dated(prompt, answer.format(right), call))[right]["kind"] == "time-zone"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]
    assert flagged(dated("Today is 2031-08-09.", answer.format(right), call)) == [right]


def test_a_day_named_apart_from_the_date_or_under_a_prompt_of_two_dates_explains_nothing() -> None:
    """ "The day after tomorrow, May 15" is no tomorrow; nor is "yesterday. May 13" across a sentence's
    end; nor is a prompt's first date today where the prompt writes two."""
    call = {"tool": "lookup", "result": {"status": "ok"}}
    today = "Today is 2031-05-14."
    assert flagged(dated(today, "It arrives the day after tomorrow, May 15.", call)) == ["May 15"]
    assert flagged(dated(today, "I checked yesterday. May 13 is the deadline.", call)) == ["May 13"]
    two = "Policy updated 2031-01-01. Today is 2031-05-14."
    assert flagged(dated(two, "It ships tomorrow, January 2.", call)) == ["January 2"]


@pytest.mark.parametrize(
    ("prompt", "answer", "right", "wrong"),
    [
        (
            "Today is Monday, 2031-04-14.",
            "The next delivery is tomorrow, {}.",
            "Tuesday, April 15",
            "April 16",
        ),
        ("Current date: 2030-03-03.", "The clinic took your sample yesterday, {}.", "March 2", "March 1"),
    ],
)
def test_a_date_the_answer_names_as_tomorrow_or_yesterday_is_the_day_after_or_before_the_prompts(
    prompt: str, answer: str, right: str, wrong: str
) -> None:
    """A date written right after "tomorrow" or "yesterday" is the day after or before the
    prompt's; another date so named is flagged."""
    call = {"tool": "lookup", "result": {"status": "ok"}}
    assert computed(dated(prompt, answer.format(right), call))[right]["kind"] == "date-shift"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        (  # a freight desk's delivery appointment
            {"load": "L-40", "appointment": "16:00 EDT"},
            "Delivery is booked for 16:00 EDT ({} CDT) in Atlanta.",
            "15:00",
            "14:00",
        ),
        (  # a broadcast desk's air time, in generic zones and clock notation
            {"spot": "SP-9", "airs": "9:10 AM PT"},
            "The spot airs at 9:10 AM PT, which is {} ET.",
            "12:10 PM",
            "11:10 AM",
        ),
    ],
)
def test_a_time_restating_one_before_it_in_another_zone_is_computed(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A clock time written with a zone restates the time its sentence writes before it in another
    zone, as the same moment by the zones' offsets from UTC; another time is flagged."""
    assert computed(run(answer.format(right), result))[right]["kind"] == "restated"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


def test_a_time_in_another_zone_restates_only_the_time_right_before_it() -> None:
    """Another event's time earlier in the sentence is no time restated: a pickup at a made-up 14:00
    CT after a webinar at 15:00 ET is flagged."""
    result = {"webinar": "W-1", "starts": "15:00 ET"}
    assert flagged(run("The webinar starts at 15:00 ET, and your pickup is at 14:00 CT.", result)) == [
        "14:00"
    ]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        (
            "Today is 2031-06-29. The time is 08:15.",
            {"host": "SQL-1", "last_good_backup": "2031-06-27T23:06:45Z"},
            "Its last good backup finished at 23:06, {} ago.",
            "33 h 9 min",
            "30 h 9 min",
        ),
        (
            "Today is Saturday, 2031-08-09 and the time is 14:10 BST (UTC+1).",
            {"pump": "P2", "trip_time": "2031-08-09T07:42:10Z", "standby_isolated_since": "2031-08-06"},
            "Pump 2 tripped at 08:42 BST, about {} ago.",
            "5 h 28 min",
            "6 h 28 min",
        ),
    ],
)
def test_a_timestamp_gives_its_times_day_for_a_length_from_now(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A time written with its date in one timestamp is on that day, on UTC's clock or the prompt's
    zone's, whatever other dates its record holds: a length back to it from now, over days too, is
    elapsed; another length is flagged."""
    call = {"tool": "lookup", "result": result}
    assert computed(dated(prompt, answer.format(right), call))[right]["kind"] == "elapsed"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


def test_no_length_runs_from_now_to_a_time_on_another_day() -> None:
    """A slot tomorrow at 12:15 is no two hours away from today's 10:15; nor is a time of a record of
    two dates on either of them."""
    prompt = "Today is 2030-05-06. The current time is 10:15."
    call = {"tool": "find_slot", "result": {"date": "2030-05-07", "slot": "12:15"}}
    assert flagged(dated(prompt, "Your slot at 12:15 is 2 hours away.", call)) == ["2 hours"]
    call = {"tool": "find_slot", "result": {"from": "2030-05-07", "to": "2030-05-08", "slot": "12:15"}}
    assert flagged(dated(prompt, "Your slot at 12:15 is 26 hours away.", call)) == ["26 hours"]


def test_a_held_time_and_a_held_length_alone_explain_no_time() -> None:
    """With neither the time nor the length in its sentence, a time a record's start and length
    would give is flagged: many times and lengths agree by chance. Nor does a length the sentence
    alone writes move its made-up start to its made-up end: both times are flagged."""
    result = {"run": "R-7", "run_start": "14:10", "run_minutes": 95}
    assert flagged(run("Your results are ready by 3:45 PM.", result)) == ["3:45 PM"]
    made_up = run("Your 2-hour slot from 10:30 AM ends at 12:30 PM.", {"status": "ok"})
    assert flagged(made_up) == ["10:30 AM", "12:30 PM"]


# --- one operation on the numbers a sentence writes ---------------------------------------


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        ({"hours": 80, "rate": 28.5}, "Regular time: 80 h at $28.50 comes to ${}.", "2,280.00", "2,380.00"),
        ({"salary_due": 3840}, "The $3,840 spread over 26 paychecks is about ${} each.", "147.69", "152.69"),
        ({"bills": [{"kl": 4200}, {"kl": 7350}]}, "Use rose from 4,200 to 7,350 kl, up {}%.", "75", "65"),
        # A rate written with a slash ("/hour", "/m") is an operand, as a date's pieces are not.
        ({"boat": "K-3", "rate": 12.5}, "At $12.50/boat, 3 boats come to ${}.", "37.50", "39.50"),
        # A count in words is the number it names, as in figures.
        (
            {"plan": "Wash Club", "monthly": 29.99},
            "Twelve months at $29.99 comes to ${}.",
            "359.88",
            "369.88",
        ),
        ({"lane": 4, "bill": 94}, "Split six ways, the $94 bill is about ${} each.", "15.67", "16.67"),
        # A count glued to its unit by a hyphen counts that unit: a gym's plan, a language course.
        ({"plan": "annual", "price": 540}, "The 12-month plan is $540, so ${} a month.", "45.00", "47.00"),
        (
            {"course": "B1", "weeks": 6, "fee": 390},
            "The six-week course is €390, or €{} a week.",
            "65.00",
            "67.00",
        ),
        ({"cloth": "linen", "per_metre": 9.8}, "Linen at €9.80/m for 2.5 m is €{}.", "24.50", "25.50"),
        # A decimal comma is the same number ("€0,15" is €0.15): a copy shop, a seedling nursery.
        ({"job": "C-88", "pages": 24, "per_page": 0.15}, "24 pages at €0,15 come to €{}.", "3,60", "3,80"),
        (
            {"order": "T-5", "trays": 12, "total": 54},
            "The 12 trays cost €54,00, so €{} a tray.",
            "4,50",
            "4,80",
        ),
    ],
)
def test_one_operation_on_two_numbers_the_sentence_writes_explains_a_figure(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A product, a quotient or a change worked out from numbers the same sentence writes; a
    figure no one operation on them gives stays flagged."""
    found = run(answer.format(right), result)
    assert flagged(found) == []
    kinds = {d["kind"] for d in computed(found).values()}
    assert "sentence-arithmetic" in kinds
    assert flagged(run(answer.format(wrong), result)) == [wrong + "%" if "%" in answer else wrong]


def test_a_comma_is_no_decimal_one_where_the_answer_writes_points() -> None:
    """ "Seats 14,15" beside "$16.00" are two seats, not 14.15: $30.15 is no sum of its sentence's numbers."""
    found = run("Seats 14,15 add $16.00, so you pay $30.15.", {"show": "S-1", "seat_fee": 16.0})
    assert flagged(found) == ["30.15"]


@pytest.mark.parametrize(
    ("rows", "last", "right", "wrong"),
    [
        # A hardware shop's stock table: the last line's quantity times its price.
        (
            [
                ("Hinges", 40, "1.25"),
                ("Screws", 500, "0.04"),
                ("Brackets", 24, "2.10"),
                ("Bolts", 120, "0.35"),
                ("Washers", 300, "0.02"),
                ("Anchors", 60, "0.45"),
                ("Clamps", 16, "4.80"),
            ],
            ("Latches", 14, "3.45"),
            "48.30",
            "58.30",
        ),
        # A lab's instrument hours: the last instrument's hours times its hourly rate.
        (
            [
                ("Centrifuge", 12, "18.00"),
                ("Microscope", 30, "22.50"),
                ("Incubator", 96, "1.75"),
                ("PCR cycler", 18, "9.40"),
                ("Spectrometer", 6, "41.00"),
                ("Fume hood", 40, "3.10"),
                ("Freezer", 720, "0.15"),
            ],
            ("Autoclave", 7, "12.35"),
            "86.45",
            "68.45",
        ),
    ],
)
def test_a_long_tables_row_is_read_for_its_own_arithmetic(
    rows: list, last: tuple, right: str, wrong: str
) -> None:
    """In a table longer than the operands one sentence may give, a row's figure is worked out
    from the numbers nearest it (its own row), not from the table's first rows."""
    result = {"lines": [{"name": n, "qty": q, "price": float(p)} for n, q, p in [*rows, last]]}
    head = "| Item | Qty | Each | Line |\n|---|---|---|---|\n"
    body = "".join(f"| {n} | {q} | ${p} |  |\n" for n, q, p in rows)
    name, qty, price = last
    found = run(head + body + f"| {name} | {qty} | ${price} | ${right} |", result)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "sentence-arithmetic"
    assert flagged(run(head + body + f"| {name} | {qty} | ${price} | ${wrong} |", result)) == [wrong]


def test_a_hyphenated_count_in_words_is_no_two_operands() -> None:
    """ "Twenty-five" is not twenty and five: $200 is no product of the sentence's numbers."""
    found = run("Twenty-five seats at $10 cost $200 in total.", {"row": "R", "price": 10})
    assert flagged(found) == ["200"]


def test_the_sentence_before_a_figure_may_give_its_operand_but_not_one_further_back() -> None:
    """ "Freight is … $555.00. Fuel surcharge at 12%: $66.60." takes 12% of the sentence before;
    with a sentence between them the two are no longer one piece of arithmetic."""
    quote = {"pallets": 3, "rate": 185, "fuel_pct": 12}
    near = "Freight is 3 × $185.00 = $555.00. Fuel surcharge at 12%: ${}."
    found = run(near.format("66.60"), quote)
    assert flagged(found) == []
    assert computed(found)["66.60"]["kind"] == "sentence-arithmetic"
    far = "Freight is 3 × $185.00 = $555.00. It ships on Monday. Fuel surcharge at 12%: $66.60."
    assert flagged(run(far, quote)) == ["66.60"]


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        ({"crates": 14, "kg_each": 18.5}, "Chargeable weight: {}. Gross: 14 × 18.5 kg.", "259 kg", "269 kg"),
        ({"hours": 12, "rate": 45.5}, "Your bill is ${}. That is 12 h × $45.50.", "546.00", "556.00"),
    ],
)
def test_the_working_in_the_sentence_after_a_figure_explains_it(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A figure stated first and worked out in the next sentence is computed; one the working does
    not give is flagged, and so is one whose working stands two sentences on, or one the next
    sentence's numbers give without an operation's sign ("12 h at $45.50")."""
    assert computed(run(answer.format(right), result))[right]["kind"] == "sentence-arithmetic"
    assert wrong in flagged(run(answer.format(wrong), result))
    far = answer.format(right).replace(". ", ". Thanks for waiting. ", 1)
    assert right in flagged(run(far, result))
    unshown = answer.format(right).replace("×", "at")
    assert right in flagged(run(unshown, result))


def test_a_figure_the_sentences_arithmetic_explains_is_an_operand_of_a_total() -> None:
    """Labour worked out on its own line is a term of the total below it, as a figure read is."""
    job = {"hours": 6, "rate": 42.75, "parts": 35.0}
    answer = "- Labour: 6 hours at 42.75 an hour, so $256.50\n- Parts: $35.00\n- Total: ${}"
    found = run(answer.format("291.50"), job)
    assert flagged(found) == []
    assert computed(found)["291.50"]["kind"] == "sum"
    assert flagged(run(answer.format("301.50"), job)) == ["301.50"]


def test_a_small_whole_figure_is_no_product_of_the_sentences_numbers() -> None:
    """ "3 crates of 2 kinds, 6 in all" would be a product by chance: a whole figure under 100
    is only a sum or a difference of the sentence's numbers."""
    stock = {"crates": [{"kind": "pears"}, {"kind": "plums"}, {"kind": "figs"}]}
    assert flagged(run("We hold 3 crates across 2 kinds, so 6 crates in all.", stock)) == ["6 crates"]
    assert flagged(run("We hold 3 crates and 2 pallets, so 5 loads in all.", stock)) == []


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        ({"tile": "slate", "price": 4.5}, "A pallet of 16 tiles at $4.50 each is ${}.", "72.00", "74.00"),
        ({"zone": "P2", "hourly": 8.5}, "Parking: 6 bays at €8.50 a bay comes to €{}.", "51.00", "53.00"),
    ],
)
def test_a_figure_written_to_the_cent_may_be_a_product_however_small(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """ "$72.00" is written to the cent: no small whole count, so a product of the sentence's
    numbers may give it; another amount stays flagged."""
    found = run(answer.format(right), result)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "sentence-arithmetic"
    assert flagged(run(answer.format(wrong), result)) == [wrong]


@pytest.mark.parametrize(
    ("call", "right", "wrong"),
    [
        (
            {"tool": "lend_tool", "result": {"tool": "drill", "out": "2025-03-03", "due": "2025-03-10"}},
            "7",
            "9",
        ),
        (
            {
                "tool": "hold_room",
                "args": {"check_in": "2025-06-01", "check_out": "2025-06-04"},
                "result": {"room": "12B"},
            },
            "3",
            "4",
        ),
    ],
)
def test_the_days_between_two_dates_a_record_holds_are_a_date_span(
    call: dict[str, Any], right: str, wrong: str
) -> None:
    """A loan or a stay as long as the dates of its result, or of its call, say it is."""

    def answer(days: str) -> dict[str, Any]:
        return run_suite(build_conversation(build_turn(f"That is {days} days in all.", calls=[call])))

    found = answer(right)
    assert flagged(found) == []
    assert computed(found)[f"{right} days"]["kind"] == "date-span"
    assert flagged(answer(wrong)) == [f"{wrong} days"]


def test_a_date_span_pairs_two_dates_not_two_readings_of_one_in_days_not_hours() -> None:
    """ "03/04/2025" may be March 4 or April 3: 30 days between its readings is no span; nor is
    "24 hours" between two dates a day apart, a span of dates being a count of days."""

    def flags(answer: str, result: dict[str, Any]) -> list[str]:
        return flagged(
            run_suite(build_conversation(build_turn(answer, calls=[{"tool": "t", "result": result}])))
        )

    assert flags("That is 30 days.", {"issued": "03/04/2025"}) == ["30 days"]
    assert flags("That is 24 hours.", {"out": "2025-01-01", "back": "2025-01-02"}) == ["24 hours"]


# --- dates and times from the day the prompt gives, and from counts a record holds ----------


def dated(prompt: str, answer: str, *calls: dict[str, Any]) -> dict[str, Any]:
    """One turn under a system prompt that dates the conversation."""
    return run_suite(build_conversation(build_turn(answer, calls=list(calls))) | {"system": prompt})


@pytest.mark.parametrize(
    ("prompt", "call", "answer", "right", "wrong"),
    [
        (
            "Today is 2030-03-02.",
            {"tool": "library_loan", "result": {"book": "Dune", "due_back": "2030-03-20"}},
            "The book is due back March 20, {} days from today.",
            "18",
            "17",
        ),
        (
            "Current date: 12 January 2031.",
            {"tool": "kiln_booking", "result": {"kiln": "K2", "firing_on": "2031-02-03"}},
            "Your firing is in {} days.",
            "22",
            "23",
        ),
        (  # both dates in the prompt, the second without its year
            "Today is 2029-10-01. Entries close on October 19.",
            {"tool": "list_entries", "result": {"entries": []}},
            "Entries close in {} days.",
            "18",
            "19",
        ),
    ],
)
def test_the_days_from_the_day_the_prompt_gives_to_a_date_held_are_a_date_span(
    prompt: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """The prompt's date is the day the conversation happens, held with every record: a count of
    days from it to a date a result or the prompt holds is computed; one day off is flagged."""
    found = dated(prompt, answer.format(right), call)
    assert flagged(found) == []
    assert computed(found)[f"{right} days"]["kind"] == "date-span"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [f"{wrong} days"]


@pytest.mark.parametrize(
    ("user", "call", "answer", "right", "wrong"),
    [
        (  # a date the user gives, a slot a result lists
            "The recital is on June 20.",
            {"tool": "list_rehearsal_rooms", "result": {"slots": ["2031-06-02T18:00", "2031-06-09T18:00"]}},
            "Your recital is Friday, June 20.\n\nThe June 9 slot leaves {} days to spare.",
            "11",
            "12",
        ),
        (  # two dates two results hold
            "When is the next intake after the audit?",
            {"tool": "get_audit", "result": {"audit_on": "2032-02-03", "intake_on": "2032-02-17"}},
            "The audit is on February 3 and the next intake on February 17, {} days later.",
            "14",
            "15",
        ),
    ],
)
def test_the_days_between_two_dates_the_answer_writes_that_sources_ground_are_a_date_span(
    user: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A count of days from a date its sentence (or the one before) writes to another date the answer
    writes, each grounded by a result or the user, is computed; one day off is flagged."""

    def asked(count: str) -> dict[str, Any]:
        return run_suite(build_conversation(build_turn(answer.format(count), calls=[call], user=user)))

    assert computed(asked(right))[f"{right} days"]["kind"] == "date-span"
    assert flagged(asked(wrong)) == [f"{wrong} days"]


@pytest.mark.parametrize(
    ("user", "answer"),
    [
        (
            "If I plant on May 20, when is the harvest?",
            "It takes 65 days, so from May 20 you harvest around July 24.",
        ),
        ("We leave on 3 March.", "Allow 12 days for the visa from 3 March: it is ready on 15 March."),
    ],
)
def test_a_count_that_moved_a_date_is_no_span_to_the_date_it_moved_it_to(user: str, answer: str) -> None:
    """A date explained by moving a grounded date by a count the sentence writes never grounds that
    count in turn: two made-up values would vouch for each other."""
    found = run_suite(build_conversation(build_turn(answer, user=user)) | {"system": "Today is 2030-03-01."})
    assert any(text.endswith("days") for text in flagged(found))


@pytest.mark.parametrize(
    ("prompt", "call", "answer", "right", "wrong"),
    [
        (
            "Today is Friday, 2031-04-25.",
            {"tool": "get_booking", "result": {"booking": "WT-8", "tour_date": "2031-05-03"}},
            "The tour is {} days away, so a cancellation today is refunded in full.",
            "8",
            "9",
        ),
        (
            "Current date: 2030-09-15.",
            {"tool": "get_warranty", "result": {"serial": "SN-448", "expires": "2030-10-06"}},
            "Your warranty has {} days left.",
            "21",
            "20",
        ),
    ],
)
def test_the_days_from_the_prompts_date_run_to_a_date_an_earlier_turn_read(
    prompt: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A date read in an earlier turn is still held: the days from the prompt's date to it are a
    date span in a later turn that reads nothing; one day off is flagged."""

    def asked(count: str) -> dict[str, Any]:
        first = build_turn("I found it.", calls=[call])
        later = build_turn(answer.format(count), user="How long is left?")
        return run_suite(build_conversation(first, later) | {"system": prompt})

    assert computed(asked(right))[f"{right} days"]["kind"] == "date-span"
    assert flagged(asked(wrong)) == [f"{wrong} days"]


@pytest.mark.parametrize(
    ("prompt", "call", "answer", "right", "wrong"),
    [
        (
            "Today is 2031-07-14.",
            {"tool": "rent_canoe", "result": {"canoe": "C-7", "rental_days": 5}},
            "Your canoe rental covers 5 days, so please return it by {}.",
            "July 19",
            "July 20",
        ),
        (
            "You answer questions about building permits.",
            {"tool": "permit_status", "result": {"filed": "2030-11-03", "review_window_days": 9}},
            "Reviews finish within 9 days of filing: by {}.",
            "November 12, 2030",
            "November 13, 2030",
        ),
        (
            "Today is Friday, 2031-08-01.",
            {"tool": "submit_exam", "result": {"exam": "E-55", "grading_business_days": 3}},
            "Grades arrive within 3 business days, by {}.",
            "Wednesday, August 6",
            "Monday, August 4",
        ),
        # Business days the prompt writes in words, the sentence as a compound or in figures.
        (
            "Today is Friday, 2031-08-01. Interlibrary loans arrive in four working days.",
            {"tool": "request_loan", "result": {"loan": "ILL-3", "requested": "2031-08-01"}},
            "With a 4-working-day transfer, the book arrives by {}.",
            "Thursday, August 7",
            "Tuesday, August 5",
        ),
        (
            "You schedule lab work. Assays take 10 business days.",
            {"tool": "log_sample", "result": {"sample": "S-81", "received": "2031-03-03"}},
            "Received March 3, so the assay is done in 10 business days: by {}.",
            "March 17",
            "March 13",
        ),
        # A range of business days the prompt states gives both its ends.
        (
            "Today is Tuesday, 2031-07-15. Card refunds take 3–5 business days.",
            {"tool": "refund_order", "result": {"refund": "RF-1", "issued": "2031-07-15"}},
            "Refunded today; expect it between {} and Tuesday, July 22.",
            "Friday, July 18",
            "Thursday, July 17",
        ),
        (
            "Today is Monday, 2031-03-03. Soil tests take 2-4 working days.",
            {"tool": "log_soil_sample", "result": {"sample": "SO-4", "received": "2031-03-03"}},
            "Your results should come between {} and Friday, March 7.",
            "Wednesday, March 5",
            "Tuesday, March 4",
        ),
        # A window the prompt states that closes before a record's date moves it back.
        (
            "Today is 2031-05-01. Tickets can be exchanged up to 72 hours before the show.",
            {"tool": "get_ticket", "result": {"ticket": "T-9", "show_date": "2031-05-20"}},
            "You can exchange it until the day 72 hours before the show: {}.",
            "Saturday, May 17",
            "Sunday, May 18",
        ),
        (
            "Today is 2031-08-01. A full refund needs 14 days' notice before the start date.",
            {"tool": "get_hire", "result": {"hire": "H-3", "start_date": "2031-09-01"}},
            "For a full refund, cancel before {}.",
            "Monday, August 18",
            "Tuesday, August 19",
        ),
        # A deadline the answer writes ("until"), where the prompt's own sentence says the window
        # closes before the record's date: a boat hire, a concert hall.
        (
            "Today is 2031-06-01. Free cancellation until 48 hours before the hire starts.",
            {"tool": "get_hire", "result": {"hire": "B-2", "start_date": "2031-06-20"}},
            "You can cancel free of charge until {}.",
            "Wednesday, June 18",
            "Thursday, June 19",
        ),
        (
            "Today is 2031-09-01. Seats can be swapped until 72 hours before the concert.",
            {"tool": "get_seats", "result": {"booking": "C-7", "concert_date": "2031-09-27"}},
            "Swaps stay open until {}.",
            "Wednesday, September 24",
            "Thursday, September 25",
        ),
        # A count the prompt states is a policy: it moves a record's date unwritten.
        (
            "Today is 2031-07-14. Library holds stay on the shelf for 7 days.",
            {"tool": "find_hold", "result": {"hold": "H-88", "arrived": "2031-07-10"}},
            "Your hold is waiting; pick it up by {}.",
            "July 17",
            "July 18",
        ),
        (
            "Today is 2029-03-01. Warranty claims must be filed within 10 business days of delivery.",
            {"tool": "get_delivery", "result": {"order": "W-5", "delivered": "2029-02-26"}},
            "File the claim no later than {}.",
            "March 12",
            "March 8",
        ),
    ],
)
def test_a_date_moved_on_by_the_days_a_record_or_the_prompt_holds_is_a_date_offset(
    prompt: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A date the prompt or a record holds moved on by a count of days the same record or the
    prompt holds (business days skip the weekend), a record's count where the sentence writes it,
    the prompt's anywhere: computed. A date the count does not reach is flagged."""
    found = dated(prompt, answer.format(right), call)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "date-offset"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        # A range's first end, alone, is no deadline: the refund may take five days.
        (
            "Today is Tuesday, 2031-07-15. Card refunds take 3–5 business days.",
            "It will be back on your card no later than Friday, July 18.",
        ),
        # Opening hours are no range of days: nine business days are no policy here.
        (
            "Today is Tuesday, 2031-07-15. We are open 9 to 5 business days. Repairs take 5 business days.",
            "Your repair will be done by Monday, July 28.",
        ),
    ],
)
def test_a_range_of_business_days_moves_a_date_by_its_first_end_only_beside_its_last(
    prompt: str, answer: str
) -> None:
    call = {"tool": "log_job", "result": {"job": "J-1", "received": "2031-07-15"}}
    assert flagged(dated(prompt, answer, call)) == [answer.split("by ")[-1].split("than ")[-1].rstrip(".")]


@pytest.mark.parametrize(
    ("prompt", "call", "answer", "wrong"),
    [
        # No "before" and no deadline right before the date: the day 72 hours before is no policy's.
        (
            "Today is 2031-05-01. Tickets can be exchanged up to 72 hours before the show.",
            {"tool": "get_ticket", "result": {"ticket": "T-9", "show_date": "2031-05-20"}},
            "The date is {}.",
            "Saturday, May 17",
        ),
        # "by" that is no deadline of the date ("by email").
        (
            "Today is 2031-06-01. Free cancellation until 48 hours before the hire starts.",
            {"tool": "get_hire", "result": {"hire": "B-2", "start_date": "2031-06-20"}},
            "Your hire starts on {}; we will remind you by email.",
            "Wednesday, June 18",
        ),
        # A "before" that follows another clause, not the count ("14 days after booking, before …").
        (
            "Today is 2031-06-01. Payment is due 14 days after booking, before the tickets are issued.",
            {"tool": "get_booking", "result": {"booking": "K-1", "booked_on": "2031-06-20"}},
            "Payment is due by {}.",
            "Friday, June 6",
        ),
        # A count inside another ("2 days" in "12 days") is not the one "before" follows.
        (
            "Today is 2031-06-01. Refunds take 2 days. Free cancellation until 12 days before arrival.",
            {"tool": "get_stay", "result": {"stay": "S-4", "arrival": "2031-06-20"}},
            "Cancel by {} for a full refund.",
            "Wednesday, June 18",
        ),
    ],
)
def test_a_window_runs_back_from_a_date_only_where_before_is_said_of_it(
    prompt: str, call: dict[str, Any], answer: str, wrong: str
) -> None:
    """Without "before" in its sentence, or a deadline right before the date where the prompt says
    "before" right after the count, nothing says a policy's window closes ahead of a record's date."""
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


@pytest.mark.parametrize("key", ["transit_days", "transit_business_days"])
def test_a_count_of_days_past_the_calendar_moves_no_date(key: str) -> None:
    """A count no calendar holds (or business days past MAX_BUSINESS_DAYS, counted a day at a
    time) moves nothing and raises nothing."""
    call = {"tool": "ship", "result": {"sent": "2031-08-01", key: 10**15}}
    found = dated("Today is 2031-08-01.", f"It arrives within {10**15} days, by 2031-08-06.", call)
    assert "2031-08-06" in flagged(found)


@pytest.mark.parametrize(
    ("user", "call", "answer", "right", "wrong"),
    [
        (
            "If I transplant on May 20, when will it be ripe?",
            {"tool": "get_variety", "result": {"variety": "Stupice", "listed": "2031-03-01"}},
            "It ripens in about 60 days, so from May 20 expect fruit around {}.",
            "July 19",
            "July 20",
        ),
        (
            "When is the cutoff to cancel?",
            {"tool": "get_booking", "result": {"booking": "CB-9", "arrival": "2030-06-20"}},
            "Cancel more than 7 days before your June 20 arrival: by {} at the latest.",
            "June 13",
            "June 14",
        ),
    ],
)
def test_a_grounded_date_moved_by_days_its_sentence_writes_is_a_date_offset(
    user: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """A date the user or a result gave, written in the figure's sentence, moved on or back by the
    days that sentence writes, is computed; a day off is flagged."""
    turn = build_turn(answer.format(right), calls=[call], user=user)
    derivation = computed(run_suite(build_conversation(turn)))[right]
    assert derivation["kind"] == "date-offset" and " moved " in derivation["from"]
    turn = build_turn(answer.format(wrong), calls=[call], user=user)
    assert wrong in flagged(run_suite(build_conversation(turn)))


def test_a_date_only_the_answer_writes_moves_nowhere_nor_by_a_length_no_check_reads() -> None:
    """ "From April 2" that nothing grounds explains no date ten days on; nor does "a week", which
    no check reads, move a grounded one."""
    found = run("From April 2, 10 days on is April 12.", {"status": "open", "opened": "2030-01-05"})
    assert "April 12" in flagged(found)
    booking = {"booking": "CB-9", "arrival": "2030-06-20"}
    found = run("Cancel a week before your June 20 arrival: by June 13.", booking, user="Cutoff?")
    assert flagged(found) == ["June 13"]


def test_a_date_offset_needs_its_count_written_in_the_sentence() -> None:
    """With no count of days in its sentence, a date no source holds stays flagged, though a
    record's count would reach it: many dates and counts agree by chance."""
    call = {"tool": "rent_canoe", "result": {"canoe": "C-7", "rental_days": 5}}
    found = dated("Today is 2031-07-14.", "Please return the canoe by July 19.", call)
    assert flagged(found) == ["July 19"]


def test_a_date_explained_is_explained_again_where_a_later_answer_restates_it() -> None:
    """Turn 0 moves the prompt's date on by the record's 5 days; turn 1 restates the date with no
    call: no flag. Another date in turn 1 is flagged."""
    call = {"tool": "rent_canoe", "result": {"canoe": "C-7", "rental_days": 5}}
    first = build_turn("The rental covers 5 days: return it by July 19.", calls=[call])

    def second(day: str) -> dict[str, Any]:
        later = build_turn(f"Yes, {day} is the return date.", calls=[], user="So {day}?")
        return run_suite(build_conversation(first, later) | {"system": "Today is 2031-07-14."})

    assert [f for f in second("July 19")["findings"] if f["severity"] == "flag"] == []
    assert flagged(second("July 21")) == ["July 21"]


def test_a_count_of_days_may_run_to_a_date_the_answer_explained() -> None:
    """June 8 is the record's receipt moved on by its 6 days; "2 days from today" runs from the
    prompt's date to it (one step). Three days is flagged."""
    call = {
        "tool": "culture_status",
        "result": {"sample": "S-14", "received": "2030-06-02", "incubation_days": 6},
    }
    answer = "Incubation takes 6 days, so results are ready on June 8, {} days from today."
    found = dated("Today is 2030-06-06.", answer.format(2), call)
    assert flagged(found) == []
    assert computed(found)["2 days"]["kind"] == "date-span"
    assert flagged(dated("Today is 2030-06-06.", answer.format(3), call)) == ["3 days"]


@pytest.mark.parametrize(
    ("prompt", "call", "answer", "right", "wrong"),
    [
        # A lab: the receipt moved on by the incubation the record holds, then the review it holds.
        (
            "Today is 2030-06-06.",
            {
                "tool": "culture_status",
                "result": {
                    "sample": "S-14",
                    "received": "2030-06-02",
                    "incubation_days": 6,
                    "review_days": 14,
                },
            },
            "Incubation takes 6 days, so results are ready on June 8. "
            "Review follows 14 days after June 8, on {}.",
            "June 22",
            "June 23",
        ),
        # A canoe rental: today moved on by the record's days, then the prompt's refund delay.
        (
            "Today is 2031-07-14. Deposits come back 10 days after the return.",
            {"tool": "rent_canoe", "result": {"canoe": "C-7", "rental_days": 5}},
            "The rental covers 5 days: return it by July 19. "
            "The deposit comes back 10 days after July 19, on {}.",
            "July 29",
            "July 30",
        ),
    ],
)
def test_a_date_the_answer_explained_moves_on_by_days_its_sentence_writes(
    prompt: str, call: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """One step from an explained date, as from a grounded one: moved by the days its sentence
    writes it is computed; a day off is flagged."""
    assert flagged(dated(prompt, answer.format(right), call)) == []
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]


def test_the_number_of_a_date_is_no_count_of_days_its_sentence_writes() -> None:
    """ "July 10" is the prompt's June 30 moved on by the record's 10 days, but the 10 written is
    the date's own: no count is written, so it stays flagged."""
    call = {"tool": "rent_canoe", "result": {"canoe": "C-7", "rental_days": 10}}
    assert flagged(dated("Today is 2031-06-30.", "Return it by July 10.", call)) == ["July 10"]


@pytest.mark.parametrize(
    ("prompt", "result", "answer", "right", "wrong"),
    [
        (
            "The film club meets biweekly.",
            {"last_meeting": "2031-03-03"},
            "The club meets biweekly, so the next meeting is {}.",
            "March 17, 2031",
            "March 10, 2031",
        ),
        (
            "Bins are collected weekly.",
            {"last_pickup": "2030-09-02"},
            "Collection is weekly: next on {}.",
            "September 9, 2030",
            "September 16, 2030",
        ),
    ],
)
def test_a_period_the_prompt_names_is_a_count_of_days_a_date_moves_by(
    prompt: str, result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """ "Biweekly" is every 14 days, "weekly" every 7: a held date moved on by the period the
    prompt names and the sentence writes is computed; one period too many or too few is flagged."""
    call = {"tool": "calendar_read", "result": result}
    found = dated(prompt, answer.format(right), call)
    assert flagged(found) == []
    assert computed(found)[right]["kind"] == "date-offset"
    assert flagged(dated(prompt, answer.format(wrong), call)) == [wrong]
