"""Amounts of money are one value family (issue 25): read one way wherever they are written.

The notations are generated from the tables of ``checks.suite.money`` (its signs, codes and
words, the characters that group digits, the minus signs, the per-unit words), never listed
case by case: an amount written in any of them by the user, the system prompt, a tool's
text, a string or a number of a tool's JSON grounds the same amount written in any of them
in an answer, and another amount is still flagged. The conversations are made up, from
unrelated everyday settings, and name no checker's domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from value_roles import CHECKS, ROLES, one_turn, unsupported

from checks.suite import run_suite
from checks.suite.money import CODES, GROUP_SPACES, MINUS, SIGNS, WORDS, read_amounts

# --- the notations, from the reader's own tables -------------------------------------------------


@dataclass(frozen=True)
class Notation:
    """One way to write an amount: how digits are grouped, the point, the mark and its place."""

    group: str  # "" (none), ",", "." or one of GROUP_SPACES
    point: str  # the decimal separator: "." or ","
    cents: bool  # cents written even when there are none ("1,000.00")
    mark: str  # a sign, a code or a currency word
    before: bool  # the mark before the digits ("$5", "USD 5") or after them ("5 €", "5 dollars")
    gap: str  # between the mark and the digits: "" or " "
    minus: str  # "" or one of MINUS, written before everything
    per: str  # "" or a per-unit tail ("/night", " per page", " each")

    def write(self, value: Decimal) -> str:
        whole, cents = f"{abs(value):.2f}".split(".")
        groups = [whole[max(0, i - 3) : i] for i in range(len(whole), 0, -3)][::-1]
        digits = self.group.join(groups) if self.group else whole
        if cents != "00" or self.cents:
            digits += self.point + cents
        sign = self.minus if value < 0 else ""
        written = f"{self.mark}{self.gap}{digits}" if self.before else f"{digits}{self.gap}{self.mark}"
        return sign + written + self.per


UNITS = ["night", "page", "seat", "kilogram", "session"]
GROUPS = ["", ",", "."] + list(GROUP_SPACES)


@st.composite
def notations(draw: st.DrawFn) -> Notation:
    group = draw(st.sampled_from(GROUPS))
    # The point is the separator the grouping leaves free.
    point = {",": ".", ".": ","}.get(group) or draw(st.sampled_from([".", ","]))
    kind = draw(st.sampled_from(["sign", "code", "word"]))
    if kind == "sign":
        mark = draw(st.sampled_from(sorted(SIGNS)))
        before = draw(st.booleans())
        gap = draw(st.sampled_from(["", " "]))
        if mark[0].isalpha():  # "US$", "C$": written before the digits
            before = True
        mark = mark.upper() if draw(st.booleans()) else mark
    elif kind == "code":
        mark = draw(st.sampled_from(sorted(CODES)))
        mark = mark.upper() if draw(st.booleans()) else mark
        before, gap = draw(st.booleans()), " "  # a code stands a space from the digits
    else:
        mark = draw(st.sampled_from(sorted(WORDS)))
        before, gap = False, " "
    unit = draw(st.sampled_from(UNITS))
    per = draw(st.sampled_from(["", f"/{unit}", f" per {unit}", " each"]))
    minus = draw(st.sampled_from(["", *MINUS]))
    return Notation(group, point, draw(st.booleans()), mark, before, gap, minus, per)


# Amounts of up to a billion, to the cent, of either sign.
amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("999999999.99"), places=2).map(
    lambda d: Decimal(int(d)) if d == d.to_integral() else d
)
signed_amounts = st.tuples(amounts, st.booleans()).map(lambda pair: -pair[0] if pair[1] else pair[0])

# --- made-up conversations from unrelated settings -------------------------------------------------

# (the user's question, the answer's sentence); no digit in either, so only the amounts count.
SETTINGS = [
    ("What is the fine on my overdue library books?", "The fine on your overdue books is {}."),
    ("How much is the compost delivery for the greenhouse?", "The compost delivery is {}."),
    ("What does an evening session at the observatory cost?", "An evening session costs {}."),
    ("What is the charter price for the sailing dinghy?", "The dinghy's charter price is {}."),
]


def conversation(setting: int, role: str, source: str, answer: str) -> dict[str, Any]:
    """One turn: the user asks, a lookup returns, the answer states a figure."""
    question, sentence = SETTINGS[setting]
    return one_turn(question, sentence, role, source, answer, noun="figure")


def source_text(role: str, value: Decimal, notation: Notation) -> str:
    return str(value) if role == "tool JSON number" else notation.write(value)


# --- the properties -----------------------------------------------------------------------------


@CHECKS
@given(
    value=signed_amounts,
    said=notations(),
    answered=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_an_amount_any_source_writes_grounds_the_same_amount_in_any_notation(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    source = source_text(role, value, said)
    answer = answered.write(value)
    report = run_suite(conversation(setting, role, source, answer))
    assert unsupported(report) == [], (source, answer)


@CHECKS
@given(
    value=amounts,
    said=notations(),
    answered=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_amount_in_any_notation_is_flagged(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    # Ten times the amount and seven more: no reading of its digits is a reading of the
    # amount's (not even "1.000" read as one or as a thousand).
    other = value * 10 + 7
    source = source_text(role, value, said)
    # Known gap, left to the value model's next step: a run of digits in a source is read
    # as a value of its own, so the "30" of "2,30 $" (a comma before cents) grounds "30".
    assume(all(Decimal(run) != other for run in re.findall(r"\d+", source)))
    answer = answered.write(other)
    report = run_suite(conversation(setting, role, source, answer))
    [amount] = read_amounts(answer)
    assert unsupported(report) == [answer[amount.number_start : amount.number_end]], (source, answer)


@CHECKS
@given(value=amounts, notation=notations())
def test_an_amount_is_read_as_one_value_with_its_keys(value: Decimal, notation: Notation) -> None:
    """The reader reads a written amount whole, and its keys hold the amount's own."""
    written = notation.write(value)
    [amount] = read_amounts(f"It came to {written} in all.")
    assert any(Decimal(key) == value for key in amount.keys()), (written, amount.keys())
    assert amount.kind == "money"


@CHECKS
@given(value=amounts, said=notations(), answered=notations(), setting=st.integers(0, len(SETTINGS) - 1))
def test_an_amount_the_user_wrote_supplies_it_to_a_write_in_any_notation(
    value: Decimal, said: Notation, answered: Notation, setting: int
) -> None:
    """A payment the user stated in one notation is supplied to the write that records it,
    and another figure typed into the same write is not."""
    question, _ = SETTINGS[setting]
    for typed, supplied in ((value, True), (value * 10 + 7, False)):
        call = {
            "id": "call-w",
            "type": "function",
            "function": {"name": "record_payment", "arguments": '{"amount": ' + str(typed) + "}"},
        }
        data = {
            "external_id": "money-write",
            "messages": [
                {"role": "user", "content": f"{question} Please record my payment of {said.write(value)}."},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call-w", "content": '{"ok": true}'},
                {"role": "assistant", "content": "Recorded."},
            ],
        }
        report = run_suite(data, only={"arguments"})
        flagged = [f for f in report["findings"] if f["code"] == "unsupported_argument"]
        assert (flagged == []) is supplied, (said.write(value), typed)


@CHECKS
@given(
    value=st.integers(1000, 999_999_999),
    role=st.sampled_from(["user", "system", "tool text", "tool JSON string"]),
    money=notations(),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_a_number_grouped_with_commas_grounds_it_grouped_plain_or_as_money(
    value: int, role: str, money: Notation, setting: int
) -> None:
    """ "41,200" a source writes with no currency grounds "41,200", "41200" and "$41,200.00"."""
    grouped = f"{value:,}"
    for answer in (grouped, str(value), money.write(Decimal(value))):
        report = run_suite(conversation(setting, role, grouped, answer))
        assert unsupported(report) == [], (grouped, answer)


# --- what the reader does at its edges -----------------------------------------------------------


def test_a_code_after_an_amount_ends_it_and_never_reaches_the_next_line() -> None:
    """ "58.40 USD" closing one item leaves the next item's number a list number."""
    text = "1. Binding repair: 58.40 USD\n2. Spine relabelling: 97.10 USD"
    assert [(a.keys(), a.currency) for a in read_amounts(text)] == [(("58.4",), "USD"), (("97.1",), "USD")]
    answer = "Here is what the bindery quoted:\n" + text
    report = run_suite(conversation(0, "tool text", "58.40 USD and 97.10 USD", answer))
    assert unsupported(report) == []


def test_one_point_zero_zero_zero_carries_both_readings_on_both_sides() -> None:
    """ "1.000 €" is a thousand where dots group and one where a program printed three
    decimals: it meets either, and so does the source that wrote it."""
    [amount] = read_amounts("1.000 €")
    assert amount.keys() == ("1", "1000")
    assert unsupported(run_suite(conversation(1, "tool JSON number", "1000", "1.000 €"))) == []
    assert unsupported(run_suite(conversation(1, "tool JSON number", "1", "1.000 €"))) == []
    assert unsupported(run_suite(conversation(1, "user", "1.000 €", "€1,000.00"))) == []
    assert unsupported(run_suite(conversation(1, "tool JSON number", "2", "1.000 €"))) == ["1.000"]


def test_a_comma_before_three_digits_groups_and_a_comma_before_two_is_the_point() -> None:
    assert [a.keys() for a in read_amounts("1,000 USD, 12,50 € and 1.000,50 €")] == [
        ("1000",),
        ("12.5",),
        ("1000.5",),
    ]


def test_a_per_unit_amount_is_the_amount_with_its_unit_noted() -> None:
    read = read_amounts("Rooms are $85/night, bikes 12 EUR per hour, maps 3 dollars each.")
    assert [(a.keys(), a.per) for a in read] == [(("85",), "night"), (("12",), "hour"), (("3",), "each")]
    report = run_suite(conversation(2, "user", "$85/night", "85 USD per night"))
    assert unsupported(report) == []


def test_a_negative_amount_keeps_its_sign_and_keys_its_magnitude() -> None:
    """A record's -40 and "refunded $40" are one amount; the sign stays in the value."""
    [amount] = read_amounts("a correction of \u2212$40.00")
    assert (amount.value, amount.keys()) == (Decimal("-40.00"), ("40",))


def test_written_arithmetic_in_codes_is_read_as_a_calculation() -> None:
    """ "1,480 USD - 1,215 USD = 265 USD": the difference is the answer's own arithmetic."""
    source = "1,480 USD and 1,215 USD"
    answer = "1,480 USD - 1,215 USD = 265 USD"
    report = run_suite(conversation(3, "tool text", source, answer))
    assert unsupported(report) == []
    [computed] = [f for f in report["findings"] if f["code"] == "computed_value"]
    assert computed["claim"]["text"] == "265"
    assert computed["derivation"]["kind"] == "difference"


def test_digits_grouped_with_no_currency_but_spaces_are_not_one_amount() -> None:
    """ "41 200" with no currency may be two numbers: only a mark makes spaces group."""
    assert read_amounts("41 200 rows", plain=True) == []
    assert [a.keys() for a in read_amounts("41 200 USD")] == [("41200",)]


def test_a_slash_before_anything_but_a_unit_word_makes_no_amount() -> None:
    """ "$100/AB12" is a token of its own (a path, a reference), "$5/10" a fraction or a
    date: neither is an amount, and the token is read as it would be without the sign."""
    assert read_amounts("$100/AB12 and $5/10") == []
