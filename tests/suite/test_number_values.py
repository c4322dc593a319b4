"""Plain numbers (no currency, no unit) are read one way however their digits are grouped.

The notations are generated from the suite's own table of the characters that group digits
(``checks.suite.money.GROUP_SPACES``) and the comma: a number any source writes, in the
user's words, the system prompt, a tool's text, a string of a tool's JSON or a number of
it, grounds the same number written in any notation in an answer ("41,200", "41200",
"41 200", "10 482.75"), and another number is flagged. The conversations are made up, from
unrelated everyday settings, and name no checker's domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from value_roles import CHECKS, ROLES, one_turn, unsupported

from checks.suite import run_suite
from checks.suite.decimals import number_text
from checks.suite.money import GROUP_SPACES

# --- the notations, from the reader's own table ---------------------------------------------------

GROUPS = ["", ","] + list(GROUP_SPACES)


@dataclass(frozen=True)
class Notation:
    """One way to write a plain number: the character between its groups of three ("" for none)."""

    group: str

    def write(self, value: Decimal) -> str:
        whole, _, decimals = number_text(value).partition(".")
        written = self.group.join(_groups(whole)) if self.group else whole
        return f"{written}.{decimals}" if decimals else written


def _groups(whole: str) -> list[str]:
    """The digits of a whole number in groups of three from the right, the head first."""
    return [whole[max(0, i - 3) : i] for i in range(len(whole), 0, -3)][::-1]


notations = st.sampled_from(GROUPS).map(Notation)

# From a thousand (the smallest number with a group) to a few billions, whole or with cents.
numbers = st.one_of(
    st.integers(1000, 9_999_999_999).map(Decimal),
    st.decimals(min_value=Decimal("1000"), max_value=Decimal("99999999"), places=2).map(
        lambda d: d.normalize() if d != d.to_integral() else Decimal(int(d))
    ),
)

# --- made-up conversations from unrelated settings -------------------------------------------------

# (the user's question, the answer's sentence); no digit in either, so only the number counts.
SETTINGS = [
    ("How many seeds germinated in the greenhouse trial?", "The trial counted {} seedlings."),
    ("How many visitors came to the fossil exhibition?", "The exhibition recorded {} visitors."),
    ("How many birds nest in the estuary colony?", "The survey found {} nesting birds."),
    ("How many volumes does the county archive hold?", "The archive holds {} volumes."),
]


def conversation(setting: int, role: str, source: str, answer: str) -> dict[str, Any]:
    """One turn: the user asks, a lookup returns, the answer states a number."""
    question, sentence = SETTINGS[setting]
    return one_turn(question, sentence, role, source, answer, noun="tally")


def source_text(role: str, value: Decimal, notation: Notation) -> str:
    return number_text(value) if role == "tool JSON number" else notation.write(value)


def numbers_apart(written: str) -> set[str]:
    """The numbers a run grouped by spaces is when read apart, as a list would be."""
    return {number_text(Decimal(piece)) for piece in written.replace(",", " ").split()}


# --- the properties -----------------------------------------------------------------------------


@CHECKS
@given(
    value=numbers,
    said=notations,
    answered=notations,
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_a_number_any_source_writes_grounds_the_same_number_however_it_is_grouped(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    source = source_text(role, value, said)
    answer = answered.write(value)
    report = run_suite(conversation(setting, role, source, answer))
    assert unsupported(report) == [], (source, answer)


@CHECKS
@given(
    value=numbers,
    said=notations,
    answered=notations,
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_number_however_it_is_grouped_is_flagged(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    # Ten times the number and seven more: never the number, nor one of its groups.
    other = value * 10 + 7
    source = source_text(role, value, said)
    answer = answered.write(other)
    # A run grouped by spaces whose numbers apart are all numbers the source writes is
    # grounded as that list (``tokens``: either reading grounds it); such draws are left out.
    assume(not (answered.group.isspace() and numbers_apart(answer) <= numbers_apart(said.write(value))))
    report = run_suite(conversation(setting, role, source, answer))
    assert unsupported(report) == [answer], (source, answer)


@CHECKS
@given(value=numbers, role=st.sampled_from(ROLES), sign=st.sampled_from(["-", "\u2212"]))
def test_a_number_signed_with_a_minus_in_a_ledger_is_the_number_the_source_writes(
    value: Decimal, role: str, sign: str
) -> None:
    """A table that subtracts writes "−11.5" (a minus sign) or "-11.5" for what a source holds as
    11.5: either sign dresses the same number, as "$" does an amount; another number is flagged."""
    written = number_text(value)
    for answer, flagged in ((f"{sign}{written}", False), (f"{sign}{number_text(value * 10 + 7)}", True)):
        report = run_suite(one_turn("What was used?", "Used | {} |", role, written, answer, noun="used"))
        assert bool(unsupported(report)) == flagged, (role, answer)


def test_a_multiplier_sign_dresses_its_number() -> None:
    """ "1024×" and "2000×" are the numbers 1024 and 2000, grounded as they are and flagged
    where no source holds them, as "1.5×" is the bare 1.5 (never an identifier)."""
    cases = [
        ("The new storage tier is {}\u00d7 larger.", "1024", "1024"),
        ("The new storage tier is {}\u00d7 larger.", "1024", "2048"),
        ("At {}\u00d7 the craters of the moon show.", "2000", "2000"),
        ("At {}\u00d7 the craters of the moon show.", "2000", "2500"),
    ]
    for sentence, held, said in cases:
        report = run_suite(one_turn("How much?", sentence, "tool text", held, said, noun="factor"))
        assert unsupported(report) == ([] if held == said else [said]), (sentence, said)
