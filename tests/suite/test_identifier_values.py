"""Identifier fragments are one value family (issue 25): read one way on both sides.

An identifier is drawn from the reader's own rules (``checks.suite.notations``): a word, a
joiner, a run of at least ``MIN_FRAGMENT_DIGITS`` digits, and perhaps a word after it. Its
fragments are the run whole and, where the identifier ends with the run, the run's tails;
an answer writes a fragment dressed in any of the characters a token's ends shed
(``checks.suite.tokens.DECORATION``) or after a few words. A fragment any source writes,
in the user's words, the system prompt, a tool's text or a string of a tool's JSON, grounds
the same fragment in any notation in an answer, and another run of digits is flagged. The
conversations are made up, from unrelated everyday settings, and name no checker's domain.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from value_roles import CHECKS, one_turn, unsupported
from value_roles import ROLES as ALL_ROLES

from checks.suite import run_suite
from checks.suite.money import SIGNS
from checks.suite.notations import (
    FRAGMENT_PREFIX,
    MIN_FRAGMENT_DIGITS,
    fragment_span,
    identifier_runs,
    number_run,
)
from checks.suite.tokens import DECORATION

# --- the notations, from the reader's own rules --------------------------------------------------

WORDS = ["locker", "plot", "telescope", "hive", "membership", "kiln"]
# Characters that hold an identifier together as one token (none of them a separator).
JOINERS = ["", "_", "-", "."]
# What an answer may dress a fragment in: the characters a token's ends shed, save those that
# make it another kind of value (a currency sign makes an amount, a sign a signed number).
DRESSING = [c for c in DECORATION if c not in SIGNS and c not in "+-"]
# Words an answer writes before a fragment: none of them a value, none with a digit.
LEADS = ["", "number ", "ending in ", "the one ending with "]

digit_runs = st.text("0123456789", min_size=MIN_FRAGMENT_DIGITS, max_size=12)


@st.composite
def identifiers(draw: st.DrawFn) -> tuple[str, str, bool]:
    """An identifier, its digit run, and whether it ends with the run."""
    run = draw(digit_runs)
    ident = draw(st.sampled_from(WORDS)) + draw(st.sampled_from(JOINERS)) + run
    ends = draw(st.booleans())
    if not ends:
        ident += draw(st.sampled_from(["_", "-", ""])) + draw(st.sampled_from(["a", "b", "annex", "spare"]))
    return ident, run, ends


@st.composite
def fragments(draw: st.DrawFn, run: str, ends: bool) -> str:
    """A fragment of the run: the run whole, or, if the identifier ends with it, a tail."""
    if not ends:
        return run
    return run[-draw(st.integers(MIN_FRAGMENT_DIGITS, len(run))) :]


@st.composite
def notations(draw: st.DrawFn) -> str:
    """How an answer writes a fragment: ``{}`` stands for the digits."""
    before = draw(st.sampled_from(["", *DRESSING]))
    after = draw(st.sampled_from(["", *DRESSING]))
    return draw(st.sampled_from(LEADS)) + before + "{}" + after


# --- made-up conversations from unrelated settings -------------------------------------------------

# (the user's question, the answer's sentence); no digit in either, so only the fragment counts.
SETTINGS = [
    ("Which locker did the sailing club give me?", "Your locker is {} this season."),
    ("Which plot is mine at the community garden?", "The garden lists {} under your name."),
    ("Which telescope is booked for tonight?", "Tonight the observatory has {} for you."),
    ("Which kiln is my pottery batch in?", "Your batch is in {} for firing."),
]
# A JSON number writes no letter, so it carries no identifier and is not among the roles.
ROLES = [role for role in ALL_ROLES if role != "tool JSON number"]


def conversation(setting: int, role: str, ident: str, answer: str) -> dict[str, Any]:
    """One turn: the user asks, a lookup returns, the answer names a fragment."""
    question, sentence = SETTINGS[setting]
    return one_turn(question, sentence, role, ident, answer, noun="assignment")


def is_fragment(digits: str, ident: str) -> bool:
    """Whether ``digits`` is a fragment of ``ident`` by the rules above, whatever its key."""
    runs = re.findall(r"\d+", ident)
    whole = digits in runs
    tail = ident.endswith(runs[-1]) and runs[-1].endswith(digits)
    return whole or tail


# --- the properties -----------------------------------------------------------------------------


@CHECKS
@given(
    drawn=identifiers(),
    data=st.data(),
    notation=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_a_fragment_of_an_identifier_any_source_writes_grounds_it_in_any_notation(
    drawn: tuple[str, str, bool], data: st.DataObject, notation: str, role: str, setting: int
) -> None:
    ident, run, ends = drawn
    fragment = data.draw(fragments(run, ends))
    answer = notation.format(fragment)
    report = run_suite(conversation(setting, role, ident, answer))
    assert unsupported(report) == [], (ident, answer)


@CHECKS
@given(
    drawn=identifiers(),
    data=st.data(),
    notation=notations(),
    role=st.sampled_from(ROLES),
    setting=st.integers(0, len(SETTINGS) - 1),
)
def test_another_run_of_digits_in_the_same_notation_is_flagged(
    drawn: tuple[str, str, bool], data: st.DataObject, notation: str, role: str, setting: int
) -> None:
    ident, run, ends = drawn
    fragment = data.draw(fragments(run, ends))
    other = data.draw(st.text("0123456789", min_size=len(fragment), max_size=len(fragment)))
    # A draw may land on a fragment of the identifier by chance (its whole run, or a tail
    # that happens to match): that one is the same value, and rightly grounds.
    assume(not is_fragment(other, ident))
    answer = notation.format(other)
    report = run_suite(conversation(setting, role, ident, answer))
    assert unsupported(report) == [other], (ident, answer)


@CHECKS
@given(drawn=identifiers(), data=st.data())
def test_an_identifier_and_a_number_are_read_as_the_same_run_with_the_same_keys(
    drawn: tuple[str, str, bool], data: st.DataObject
) -> None:
    """The one key of a fragment is among the identifier's keys, whichever side reads it."""
    ident, run, ends = drawn
    fragment = data.draw(fragments(run, ends))
    read = number_run(fragment)
    assert read is not None
    carried = {key for found in identifier_runs(ident) for key in found.keys()}
    assert set(read.keys()) <= carried, (ident, fragment)


# --- what the reader does at its edges -----------------------------------------------------------


def test_a_run_shorter_than_the_minimum_is_no_fragment_on_either_side() -> None:
    short = "7" * (MIN_FRAGMENT_DIGITS - 1)
    assert number_run(short) is None
    assert identifier_runs(f"hive_{short}") == []


def test_a_number_without_a_letter_is_no_identifier() -> None:
    """ "2031-7750" is a value of its own, not an identifier carrying 7750."""
    assert identifier_runs("2031-7750") == []


def test_a_middle_run_of_digits_is_no_fragment() -> None:
    """ "ending in" names last digits: 3456 stands inside kiln_1234567 but ends nothing."""
    keys = {key for found in identifier_runs("kiln_1234567") for key in found.keys()}
    middle = number_run("3456")
    assert middle is not None and not set(middle.keys()) & keys
    assert flagged_in("kiln_1234567", "Your batch is in kiln 3456.") == ["3456"]
    assert flagged_in("kiln_1234567", "Your batch is in the kiln ending in 4567.") == []


def flagged_in(ident: str, answer: str) -> list[str]:
    data = conversation(3, "tool text", ident, "{}")
    data["messages"][-1]["content"] = answer
    return unsupported(run_suite(data))


def _span_by_pattern(text: str, digits: str) -> tuple[int, int] | None:
    """``fragment_span``'s definition as a regular expression (which retried the identifier's
    characters at every place and took 37 s on a 5 MB result): the run whole, else its end."""
    for pattern in (rf"[\w.-]*[a-z][\w.-]*?(?<!\d){digits}(?!\d)", rf"[\w.-]*[a-z][\w.-]*?{digits}(?!\d)"):
        match = re.search(pattern, text)
        if match:
            return match.start(), match.end()
    return None


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab_.-9870 \n,", max_size=40),
    digits=st.text(alphabet="987", min_size=4, max_size=5),
)
def test_where_a_fragment_stands_is_found_as_its_definition_says(text: str, digits: str) -> None:
    assert fragment_span(text, FRAGMENT_PREFIX + digits) == _span_by_pattern(text, digits)
