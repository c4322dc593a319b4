"""Percents are read one way wherever they are written (issue 25).

The notations are generated from the suite's own tables of units (``checks.suite.tokens.
PERCENT_UNITS``, its percent sign and word, and ``WORDED_UNITS``, the same word written in
two: "per cent"), glued to the figure or a space apart: a percent any source writes, in the
user's words, the system prompt, a tool's text, a string of a tool's JSON or a number of it,
grounds the same percent written in any of them in an answer, and another percent is
flagged. A tool's JSON may also carry the percent as the fraction it is (``0.125`` for
12.5 %), which grounds it the same way. The conversations are made up, from unrelated
everyday settings, and name no checker's domain.
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
from checks.suite.tokens import PERCENT_UNITS, UNITS, WORDED_UNITS

# --- the notations, from the suite's own table ----------------------------------------------------

PERCENT_MARKS = sorted(
    {unit for unit in UNITS if unit in PERCENT_UNITS}
    | {spelling for spelling, unit in WORDED_UNITS.items() if unit in PERCENT_UNITS}
)
# A tool's JSON number may be the percent or the fraction it is.
FRACTION = "tool JSON fraction"
PERCENT_ROLES = [*ROLES, FRACTION]


@dataclass(frozen=True)
class Notation:
    """One way to write a percent: its mark, and whether a space stands before it."""

    mark: str
    gap: str

    def write(self, value: Decimal) -> str:
        return f"{number_text(value)}{self.gap}{self.mark}"


@st.composite
def notations(draw: st.DrawFn) -> Notation:
    mark = draw(st.sampled_from(PERCENT_MARKS))
    # A word stands a space from its figure; a sign may be glued or not.
    gap = " " if mark[0].isalpha() else draw(st.sampled_from(["", " "]))
    return Notation(mark, gap)


# Percents from a hundredth to a thousand, written as they read: no trailing zeros.
percents = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1000"), places=2).map(
    lambda d: d.normalize() if d != d.to_integral() else Decimal(int(d))
)

# --- made-up conversations from unrelated settings -------------------------------------------------

# (the user's question, the answer's sentence); no digit in either, so only the percent counts.
SETTINGS = [
    ("How full is the rainwater tank?", "The tank stands at {} of its volume."),
    ("What share of the choir came to rehearsal?", "Attendance was {} tonight."),
    ("How humid is the seed store?", "The seed store reads {} humidity."),
    ("How much of the marathon route is paved?", "The route is {} paved."),
]


def conversation(setting: int, role: str, source: str, answer: str) -> dict[str, Any]:
    """One turn: the user asks, a lookup returns, the answer states a percent."""
    question, sentence = SETTINGS[setting]
    if role == FRACTION:
        return one_turn(
            question, sentence, "tool JSON number", source, answer, noun="reading", number_key="reading_rate"
        )
    return one_turn(question, sentence, role, source, answer, noun="reading", number_key="reading_percent")


def source_text(role: str, value: Decimal, notation: Notation) -> str:
    if role == FRACTION:
        # A whole number of hundreds is a fraction no source writes as one: 100 % is 1, a count.
        assume(value % 100 != 0)
        return number_text(value / 100)
    return number_text(value) if role == "tool JSON number" else notation.write(value)


# --- the properties -----------------------------------------------------------------------------


@CHECKS
@given(
    value=percents,
    said=notations(),
    answered=notations(),
    role=st.sampled_from(PERCENT_ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_a_percent_any_source_writes_grounds_the_same_percent_in_any_notation(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    source = source_text(role, value, said)
    answer = answered.write(value)
    report = run_suite(conversation(setting, role, source, answer))
    assert unsupported(report) == [], (source, answer)


@CHECKS
@given(
    value=percents,
    said=notations(),
    answered=notations(),
    role=st.sampled_from(PERCENT_ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_percent_in_any_notation_is_flagged(
    value: Decimal, said: Notation, answered: Notation, role: str, setting: int
) -> None:
    # Ten times the percent and seven more, which no draw makes equal to a run of the
    # source's digits: a percent with two decimals gives one with a decimal, which no run
    # is, and any other gives more than each of its runs. So nothing grounds it by accident
    # and no draw needs leaving out.
    other = value * 10 + 7
    source = source_text(role, value, said)
    answer = answered.write(other)
    report = run_suite(conversation(setting, role, source, answer))
    assert unsupported(report) == [answer], (source, answer)


# --- "pct", the abbreviation, is a percent's unit like its sign and its word ------------------


def test_pct_is_a_percent_unit_in_the_tables_every_reading_is_built_from() -> None:
    """The property tests above draw their notations from these tables, so "pct" is among them."""
    assert "pct" in UNITS and "pct" in PERCENT_UNITS


def test_a_figure_in_pct_is_read_as_a_percent_and_flagged_when_no_source_has_it() -> None:
    """A soil lab's moisture reading: "13.5 pct" is a percent figure as "13.5%" is, so the
    answer's wrong figure is flagged, spaced or glued, and its right one is grounded."""
    question, sentence = "How damp is the sample from plot nine?", "The sample holds {} moisture."
    for source in ("12.5 pct", "12.5%", "12.5 per cent", "12.5pct"):
        for role in ("user", "tool text", "tool JSON string", "call argument"):
            for answer in ("12.5 pct", "12.5pct"):
                report = run_suite(one_turn(question, sentence, role, source, answer, noun="reading"))
                assert unsupported(report) == [], (source, role, answer)
            for answer in ("13.5 pct", "13.5pct"):
                report = run_suite(one_turn(question, sentence, role, source, answer, noun="reading"))
                assert unsupported(report) == [answer], (source, role, answer)


def test_a_figure_in_pct_is_grounded_by_the_fraction_a_result_holds() -> None:
    """A rowing club's attendance rate: a result's ``0.875`` is 87.5 pct, and 88.5 pct is not."""
    question, sentence = "How many rowers turned up this season?", "Turnout was {} of the roster."
    right = one_turn(
        question, sentence, "tool JSON number", "0.875", "87.5 pct", noun="turnout", number_key="rate"
    )
    wrong = one_turn(
        question, sentence, "tool JSON number", "0.875", "88.5 pct", noun="turnout", number_key="rate"
    )
    assert unsupported(run_suite(right)) == []
    assert unsupported(run_suite(wrong)) == ["88.5 pct"]


def test_a_percent_is_no_conversion_of_bytes_or_seconds() -> None:
    """0.3 × 1024 is 307.2, but "307 pct" of a fill level is no unit conversion of a rate of
    0.3: it is flagged, as "307 KiB" of a 0.3 MiB file would not be."""
    report = run_suite(conversation(0, "tool JSON fraction", "0.3", "307 pct"))
    assert unsupported(report) == ["307 pct"]
