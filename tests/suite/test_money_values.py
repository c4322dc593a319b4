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
from checks.suite.decimals import number_text
from checks.suite.money import (
    CODES,
    GROUP_SPACES,
    MINOR_WORDS,
    MINUS,
    SCALE_LETTERS,
    SCALE_WORDS,
    SIGNS,
    WORDS,
    read_amounts,
)

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
    """The amount in one of the plain notations (a JSON number plain)."""
    return number_text(value) if role == "tool JSON number" else notation.write(value)


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


# --- amounts with a scale: "$310K", "$2.4 million", "€3bn" -------------------------------------


@dataclass(frozen=True)
class Scaled:
    """One way to write an amount with a scale: a figure of a few digits, a scale word or
    letters after it, and a currency mark before or after the two."""

    scale: str  # a key of SCALE_WORDS or SCALE_LETTERS, in the case it is written in
    power: int
    gap: str  # between the figure and a scale word: "" or " "; letters are always glued
    point: str  # "." or ","
    mark: str
    before: bool
    mark_gap: str
    minus: str
    per: str

    def write(self, mantissa: Decimal) -> str:
        figure = number_text(abs(mantissa)).replace(".", self.point)
        body = f"{figure}{self.gap}{self.scale}"
        written = f"{self.mark}{self.mark_gap}{body}" if self.before else f"{body}{self.mark_gap}{self.mark}"
        return (self.minus if mantissa < 0 else "") + written + self.per


@st.composite
def scaled_notations(draw: st.DrawFn) -> Scaled:
    words = draw(st.booleans())
    table = SCALE_WORDS if words else SCALE_LETTERS
    scale = draw(st.sampled_from(sorted(table)))
    power = table[scale]
    scale = draw(st.sampled_from([scale, scale.upper(), scale.capitalize()]))
    gap = draw(st.sampled_from(["", " "])) if words else ""
    kind = draw(st.sampled_from(["sign", "code", "word"]))
    if kind == "sign":
        mark = draw(st.sampled_from(sorted(SIGNS)))
        before = True if mark[0].isalpha() else draw(st.booleans())
        mark_gap = draw(st.sampled_from(["", " "]))
    elif kind == "code":
        mark = draw(st.sampled_from(sorted(CODES)))
        mark = mark.upper() if draw(st.booleans()) else mark
        before, mark_gap = draw(st.booleans()), " "
    else:
        mark = draw(st.sampled_from(sorted(WORDS)))
        before, mark_gap = False, " "
    unit = draw(st.sampled_from(UNITS))
    per = draw(st.sampled_from(["", f"/{unit}", f" per {unit}", " each"]))
    minus = draw(st.sampled_from(["", *MINUS]))
    return Scaled(scale, power, gap, draw(st.sampled_from([".", ","])), mark, before, mark_gap, minus, per)


# The figure before a scale: a hundredth to a thousand, to two places, as people write one.
mantissas = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("999.99"), places=2).map(
    lambda d: Decimal(int(d)) if d == d.to_integral() else d.normalize()
)


@CHECKS
@given(
    mantissa=mantissas,
    scaled=scaled_notations(),
    said=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_an_amount_with_a_scale_is_the_scaled_amount_on_either_side(
    mantissa: Decimal, scaled: Scaled, said: Notation, role: str, setting: int
) -> None:
    """ "$2.4 million" is 2,400,000: a source that writes 2,400,000 in any notation grounds
    it, and a source that writes "$2.4 million" grounds 2,400,000 in any notation."""
    value = mantissa.scaleb(scaled.power)
    written = scaled.write(mantissa)
    for source, answer in ((source_text(role, value, said), written), (written, said.write(value))):
        if role == "tool JSON number" and source == written:
            continue  # a JSON number writes no scale
        report = run_suite(conversation(setting, role, source, answer))
        assert unsupported(report) == [], (source, answer)


@CHECKS
@given(
    mantissa=mantissas,
    scaled=scaled_notations(),
    said=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_amount_with_a_scale_is_flagged_and_its_claim_holds_the_scale(
    mantissa: Decimal, scaled: Scaled, said: Notation, role: str, setting: int
) -> None:
    """Ten times the figure and seven more, on the same scale: neither the scaled amount nor
    the figure's own digits ("2.4" of "$2.4 million") ground it, and no rounding of the
    source's amount at the precision it is written to gives it."""
    value = mantissa.scaleb(scaled.power)
    other = mantissa * 10 + 7
    for source in (source_text(role, value, said), number_text(mantissa)):
        assume(all(Decimal(run) != other for run in re.findall(r"\d+", source)))
        answer = scaled.write(other)
        report = run_suite(conversation(setting, role, source, answer))
        [amount] = read_amounts(answer)
        assert unsupported(report) == [answer[amount.number_start : amount.number_end]], (source, answer)
        assert answer[amount.number_start : amount.number_end].lower().endswith(scaled.scale.lower())


@CHECKS
@given(mantissa=mantissas, scaled=scaled_notations())
def test_an_amount_with_a_scale_is_read_as_one_value_with_its_scaled_key(
    mantissa: Decimal, scaled: Scaled
) -> None:
    written = scaled.write(mantissa)
    [amount] = read_amounts(f"It came to {written} in all.")
    assert amount.keys() == (number_text(mantissa.scaleb(scaled.power)),), written
    # Written to its last digit: "2.4 million" to a hundred thousand, "310K" to a thousand.
    assert amount.precision == len(number_text(mantissa).partition(".")[2]) - scaled.power


def _findings(question: str, result: str, answer: str, user: str = "") -> list[tuple[str, str]]:
    """The evidence findings of one turn: ``user`` said, a lookup returned ``result``."""
    call = {"id": "call-s", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    data = {
        "external_id": "scaled-amounts",
        "messages": [
            {"role": "user", "content": f"{question} {user}".strip()},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call-s", "content": result},
            {"role": "assistant", "content": answer},
        ],
    }
    report = run_suite(data, only={"evidence"})
    return [(f["code"], f["claim"]["text"]) for f in report["findings"] if f.get("claim")]


MUSEUM = "How much did the foundation award the museum for its new wing?"
APPRAISAL = "What did the appraiser value the farmhouse at?"
WATER = "What does the water board plan to spend on its pipes?"


def test_a_figure_with_a_scale_is_the_scaled_amount_not_its_digits() -> None:
    """ "$2.4 million" is 2,400,000: the result's 2400000 grounds it, and a fee of $2.40 in
    the same result does not, however alike the digits."""
    answer = "The foundation awarded $2.4 million for the wing."
    assert _findings(MUSEUM, '{"award_usd": 2400000, "currency": "USD"}', answer) == []
    assert _findings(MUSEUM, "Award letter GR-88. Filing fee: $2.40.", answer) == [
        ("unsupported_value", "2.4 million")
    ]
    assert _findings(MUSEUM, '{"award_usd": 2400000}', "The foundation awarded $2.5 million.") == [
        ("unsupported_value", "2.5 million")
    ]


def test_a_scaled_figure_that_rounds_the_result_is_computed_and_one_that_does_not_is_flagged() -> None:
    """ "$2.4 million" is written to a hundred thousand: 2,413,000 rounds to it (a rounding,
    noted), 2,520,000 does not."""
    answer = "The foundation awarded $2.4 million for the wing."
    [(code, claim)] = _findings(MUSEUM, '{"award_usd": 2413000}', answer)
    assert (code, claim) == ("computed_value", "2.4 million")
    assert _findings(MUSEUM, '{"award_usd": 2520000}', answer) == [("unsupported_value", "2.4 million")]


def test_thousands_glued_as_a_letter_are_an_amount_not_an_identifier() -> None:
    """ "$310K" is 310,000: a parcel numbered 310 does not ground it, the valuation does."""
    answer = "The appraiser valued the farmhouse at $310K."
    assert _findings(APPRAISAL, '{"parcel": 310, "appraised_value": 298500}', answer) == [
        ("unsupported_value", "310K")
    ]
    assert _findings(APPRAISAL, '{"parcel": 17, "appraised_value": 310000}', answer) == []
    # The user's own figure, in another notation, supplies it too.
    said = "I had offered $305,000 for it."
    assert _findings(APPRAISAL, '{"appraised_value": 310000}', "Your $305K offer is below it.", said) == []


def test_a_scale_in_letters_or_a_word_is_read_on_a_source_too() -> None:
    """A source's "€3bn" is three thousand million euros; a source's bare "2.4 million",
    with no currency, is 2,400,000 too, and neither grounds another amount."""
    plan = "Capital plan: €3bn over ten years."
    assert _findings(WATER, plan, "The board plans to spend €3,000,000,000.") == []
    assert _findings(WATER, plan, "The board plans to spend €3.5bn.") == [("unsupported_value", "3.5bn")]
    told = "Wing budget approved: 2.4 million."
    assert _findings(MUSEUM, told, "The wing was awarded USD 2.4 million.") == []
    assert _findings(MUSEUM, told, "The wing was awarded USD 2,400,000.") == []
    assert _findings(MUSEUM, told, "The wing was awarded 2.6 million dollars.") == [
        ("unsupported_value", "2.6 million")
    ]


# --- a JSON number under a name that says it counts a minor unit: "amount_cents": 125000 ----------

# How APIs name such a member, from a noun and the unit's word: snake case, camel case, in
# capitals, in words, or the word alone.
NAME_STYLES = [
    lambda noun, word: f"{noun}_{word}",
    lambda noun, word: f"{noun}{word.capitalize()}",
    lambda noun, word: f"{noun}_in_{word}".upper(),
    lambda noun, word: f"{noun} in {word}",
    lambda noun, word: word,
]


@st.composite
def minor_members(draw: st.DrawFn) -> tuple[str, int]:
    """A member name that ends in a minor unit's word, and how many make one major unit."""
    word = draw(st.sampled_from(sorted(MINOR_WORDS)))
    noun = draw(st.sampled_from(["amount", "total", "fee", "balance_due"]))
    return draw(st.sampled_from(NAME_STYLES))(noun, word), MINOR_WORDS[word]


@CHECKS
@given(
    value=signed_amounts,
    member=minor_members(),
    answered=notations(),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_a_json_number_in_a_minor_unit_grounds_the_amount_in_any_notation(
    value: Decimal, member: tuple[str, int], answered: Notation, setting: int
) -> None:
    name, per = member
    question, sentence = SETTINGS[setting]
    number = str(int(value * per))
    answer = answered.write(value)
    data = one_turn(question, sentence, "tool JSON number", number, answer, noun="figure", number_key=name)
    assert unsupported(run_suite(data)) == [], (name, number, answer)


@CHECKS
@given(
    value=amounts,
    member=minor_members(),
    answered=notations(),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_amount_than_a_json_number_in_a_minor_unit_is_flagged(
    value: Decimal, member: tuple[str, int], answered: Notation, setting: int
) -> None:
    name, per = member
    question, sentence = SETTINGS[setting]
    number = str(int(value * per))
    answer = answered.write(value * 10 + 7)
    data = one_turn(question, sentence, "tool JSON number", number, answer, noun="figure", number_key=name)
    [amount] = read_amounts(answer)
    assert unsupported(run_suite(data)) == [answer[amount.number_start : amount.number_end]], (name, answer)


LESSONS = "What is the fee for the cello lessons this term?"
PERMIT = "How much is the residents' parking permit for zone B?"
CLINIC = "What was the bill for the dog's check-up at the vet?"


def test_a_number_of_cents_grounds_the_amount_it_counts_and_no_other() -> None:
    """A music school's ledger keeps fees in cents, a council's permits in pence, a clinic's
    bills in cents in capitals: each grounds the amount its number counts."""
    ledger = '{"student": "R. Okafor", "term_fee_cents": 48000, "currency": "USD"}'
    assert _findings(LESSONS, ledger, "The term fee is $480.00.") == []
    assert _findings(LESSONS, ledger, "The term fee is $490.00.") == [("unsupported_value", "490.00")]
    permit = '{"zone": "B", "permitPence": 2599, "currency": "GBP"}'
    assert _findings(PERMIT, permit, "The permit costs £25.99 a year.") == []
    assert _findings(PERMIT, permit, "The permit costs £26.99 a year.") == [("unsupported_value", "26.99")]
    bill = '{"visit": "V-2231", "CONSULT_TOTAL_CENTS": 7350}'
    assert _findings(CLINIC, bill, "The check-up came to 73.50 USD.") == []


def test_a_name_that_only_ends_in_the_letters_of_a_minor_unit_counts_none() -> None:
    """ "percent" and "recent" end in "cent" without naming it: their numbers are no cents."""
    for name in ("percent", "recent", "PERCENT", "descent"):
        result = '{"' + name + '": 2599, "zone": "B"}'
        assert _findings(PERMIT, result, "The permit costs £25.99 a year.") == [
            ("unsupported_value", "25.99")
        ]


def test_an_amount_with_a_scale_the_user_wrote_supplies_the_scaled_amount_to_a_write() -> None:
    """A donor pledging "$2.4 million" supplies 2400000 to the write that records it, and
    neither 2.4 nor another amount."""
    for typed, supplied in (("2400000", True), ("2.4", False), ("2500000", False)):
        call = {
            "id": "call-w",
            "type": "function",
            "function": {"name": "record_pledge", "arguments": '{"amount": ' + typed + "}"},
        }
        data = {
            "external_id": "scaled-write",
            "messages": [
                {"role": "user", "content": "Please record my pledge of $2.4 million to the hospice."},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call-w", "content": '{"ok": true}'},
                {"role": "assistant", "content": "Recorded."},
            ],
        }
        flagged = [
            f for f in run_suite(data, only={"arguments"})["findings"] if f["code"] == "unsupported_argument"
        ]
        assert (flagged == []) is supplied, typed


def test_a_code_glued_to_its_number_is_an_amount_on_either_side() -> None:
    """ "USD1,250" is an amount as "USD 1,250" is: it grounds the same amount in any notation
    and another amount is flagged. A code glued in lower case is no amount ("cad3f" is as
    often a hexadecimal id)."""
    for source, answer, flagged in [
        ("USD1,250", "$1250", []),
        ("USD1,250", "$1,260", ["1,260"]),
        ("the pass is EUR40", "40 EUR", []),
        ("the id is cad3f91", "3 CAD", ["3"]),
    ]:
        for role in ("user", "tool text"):
            report = run_suite(conversation(1, role, source, answer))
            assert unsupported(report) == flagged, (role, source, answer)
