"""Rewrites of how values are written, and the flags they change: the metamorphic harness.

A value is the same value however it is written: "2024-05-19", "May 19, 2024" and
"5/19/2024" are one date, "$1000", "$1,000.00" and "1000 USD" one amount, "22:00" and
"10:00 PM" one time. So rewriting the notation of the values in an agent's answers and in
its user's messages should change no flag the suite raises. This module holds those
rewrites and the comparison of the suite's flags before and after one.

Each rewrite is a named callable from a conversation in the native shape (``system``, and
``messages`` or ``turns[].messages``) to a rewritten copy. It changes the text of user and
assistant messages only, never a tool result, the system prompt or a tool call's arguments,
since those are what the answers are checked against. Within that text it changes only the
values it can read for sure, and writes each one with exactly the same value; anything it
cannot read for sure (an invalid date, an amount with a scale word after it, a clock time
that could be a ratio or a verse) it leaves byte for byte. No rewrite knows a domain.

The comparison pairs the flags of two runs by conversation, turn, checker and code, and by
where the flag stands: the claim's span in the rewritten answer is mapped back through the
rewrite's edits to the original answer, so a flag on "May 19, 2024" pairs with the same
flag on "2024-05-19". What is left unpaired is a flag the rewrite added or removed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from checks.suite.conversation import split_into_turns

# --- editing text, with a record of the edits ---------------------------------------------


@dataclass(frozen=True)
class Edit:
    """One value rewritten: its span in the original text and in the rewritten one."""

    start: int
    end: int
    new_start: int
    new_end: int


@dataclass(frozen=True)
class Rewritten:
    text: str
    edits: tuple[Edit, ...]


Replacement = Callable[["re.Match[str]"], str | None]


def substitute(pattern: re.Pattern[str], replace: Replacement, text: str) -> Rewritten:
    """``text`` with each match of ``pattern`` replaced by ``replace(match)``, and the edits.

    ``replace`` returns None to leave a match alone (a value it cannot read for sure).
    """
    pieces: list[str] = []
    edits: list[Edit] = []
    last = shift = 0
    for match in pattern.finditer(text):
        new = replace(match)
        if new is None or new == match.group():
            continue
        start, end = match.span()
        pieces.append(text[last:start])
        pieces.append(new)
        edits.append(Edit(start, end, start + shift, start + shift + len(new)))
        shift += len(new) - (end - start)
        last = end
    if not edits:
        return Rewritten(text, ())
    pieces.append(text[last:])
    return Rewritten("".join(pieces), tuple(edits))


def map_back(start: int, end: int, edits: Iterable[Edit]) -> tuple[int, int]:
    """The span of the original text that a span of the rewritten text stands for.

    A boundary inside a rewritten value moves to that value's boundary in the original, so
    "May 19" inside "May 19, 2024" maps to the whole "2024-05-19" it was written from.
    """
    new_start, new_end = start, end
    for edit in edits:
        growth = (edit.new_end - edit.new_start) - (edit.end - edit.start)
        if edit.new_start <= start < edit.new_end:
            new_start = edit.start
        elif edit.new_end <= start:
            new_start -= growth
        if edit.new_start < end <= edit.new_end:
            new_end = edit.end
        elif edit.new_end < end:
            new_end -= growth
    return new_start, new_end


def widen(start: int, end: int, edits: Iterable[Edit]) -> tuple[int, int]:
    """A span of the original text, its ends moved out to whole rewritten values as
    ``map_back`` moves them: so "16.63" inside "$16.63" compares with "16.63" inside
    "16.63 USD", both standing for the whole "$16.63"."""
    for edit in edits:
        if edit.start < start < edit.end:
            start = edit.start
        if edit.start < end < edit.end:
            end = edit.end
    return start, end


# --- what the rewrites read ---------------------------------------------------------------

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ABBREVIATIONS = {name[:3]: i for i, name in enumerate(MONTHS, start=1)} | {"Sept": 9}
_MONTH_NUMBER = {name: i for i, name in enumerate(MONTHS, start=1)} | _ABBREVIATIONS
# Longest first, so "September" is tried before "Sept" and "Sep".
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))

# Digits are spelled [0-9]: \d also matches other scripts' digits, which no rewrite reads.
_ISO_DATE = re.compile(
    # Not part of a longer token (an id, a version, a path) and not a timestamp's date,
    # which is one value with its time.
    r"(?<![\w.:/-])(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?![\w/-]|[.:][0-9]|[ T][0-9]{1,2}:[0-9])"
)
_WRITTEN_DATE = re.compile(
    # "May 19, 2024", "Sept. 5 2024", "May 19th, 2024" or "19 May 2024", "19th of May, 2024":
    # a month's name (capitalised, since "may" and "march" are also words), a day and a year.
    r"(?<![\w.,$/:-])(?:"
    rf"(?P<month1>{_MONTH})(?P<dot1>\.)? (?P<day1>[0-9]{{1,2}})(?P<suffix1>st|nd|rd|th)?,? "
    r"(?P<year1>[0-9]{4})"
    r"|"
    rf"(?P<day2>[0-9]{{1,2}})(?P<suffix2>st|nd|rd|th)? (?:of )?(?P<month2>{_MONTH})(?P<dot2>\.)?,? "
    r"(?P<year2>[0-9]{4})"
    r")(?![\w]|[.,:/-][0-9])"
)
_DOLLARS = re.compile(
    # "$1000", "$1,000.00", "$5.5"; the sign before it ("-$5", "+$5") is left where it is.
    r"(?<![\w$\\])\$(?P<amount>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
    # Not the start of a longer number or token, nor of a range whose other end has no
    # sign ("$5-10"), nor an amount whose scale or currency follows in words ("$5 million",
    # "$5 USD"), nor a LaTeX formula ("$5$").
    r"(?![0-9\w$%]|[.,][0-9]|\s*[-\u2013\u2014]\s*[0-9])"
    r"(?!\s+(?i:thousand|million|billion|trillion|bn|mn|[kmb]|usd|dollars?)\b)"
)
_CLOCK_24H = re.compile(
    # Two-digit hours only: "9:30" may be either clock. Not inside a timestamp or a longer
    # number ("12:34:56", "1.14:30"), not already marked AM/PM, not a range of verses or
    # a score ("14:15-17").
    r"(?<![\w:.,/$])(?P<hour>[01][0-9]|2[0-3]):(?P<minute>[0-5][0-9])"
    r"(?![0-9\w]|[:.,][0-9]|\s*[AaPp]\.?[Mm]\b|\s*[-\u2013]\s*[0-9]{1,2}\b(?!:))"
)
# A number right after a capitalised word may be a reference ("John 14:15", "Psalm 23:01").
_AFTER_A_NAME = re.compile(r"[A-Z][a-z]+ \Z")


def _ordinal_suffix(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _iso_date(match: re.Match[str]) -> date | None:
    try:
        return date(int(match["year"]), int(match["month"]), int(match["day"]))
    except ValueError:
        return None


def _written_date(match: re.Match[str]) -> date | None:
    """The date a written date names, or None when any part of it is doubtful."""
    which = "1" if match["month1"] else "2"
    month, dot = match["month" + which], match["dot" + which]
    day, suffix = int(match["day" + which]), match["suffix" + which]
    if dot and month in MONTHS:  # "May." is no abbreviation
        return None
    if suffix and suffix != _ordinal_suffix(day):  # "May 2th" is a slip, not a date
        return None
    try:
        return date(int(match["year" + which]), _MONTH_NUMBER[month], day)
    except ValueError:
        return None


@dataclass(frozen=True)
class Amount:
    """A dollar amount as written: its whole part (digits only) and its decimals, if any."""

    whole: str
    decimals: str | None

    @classmethod
    def read(cls, match: re.Match[str]) -> Amount:
        whole, _, decimals = match["amount"].partition(".")
        return cls(whole.replace(",", ""), decimals if "." in match["amount"] else None)

    def grouped(self) -> str:
        return f"{int(self.whole):,}"


# --- the rewrites -------------------------------------------------------------------------


def _iso_to_written(match: re.Match[str]) -> str | None:
    day = _iso_date(match)
    return None if day is None else f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def _iso_to_slashed(match: re.Match[str]) -> str | None:
    day = _iso_date(match)
    return None if day is None else f"{day.month}/{day.day}/{day.year}"


def _written_to_iso(match: re.Match[str]) -> str | None:
    day = _written_date(match)
    return None if day is None else day.isoformat()


def _dollar_to_usd(match: re.Match[str]) -> str | None:
    return f"{match['amount']} USD"


def _add_grouping_and_cents(match: re.Match[str]) -> str | None:
    amount = Amount.read(match)
    if amount.decimals is not None and len(amount.decimals) > 2:
        return None  # "$0.125" has no cents form that keeps its value
    return f"${amount.grouped()}.{(amount.decimals or '').ljust(2, '0')}"


def _drop_grouping_and_cents(match: re.Match[str]) -> str | None:
    amount = Amount.read(match)
    if amount.decimals is None or not amount.decimals.strip("0"):
        return f"${int(amount.whole)}"
    return f"${int(amount.whole)}.{amount.decimals}"


def _clock_24h_to_12h(match: re.Match[str]) -> str | None:
    hour = int(match["hour"])
    if 1 <= hour <= 12:  # "09:00" and "12:30" read the same on a 12-hour clock, or are doubtful
        return None
    if _AFTER_A_NAME.search(match.string[max(0, match.start() - 40) : match.start()]):
        return None
    return f"{hour % 12 or 12}:{match['minute']} {'PM' if hour >= 12 else 'AM'}"


@dataclass(frozen=True)
class NotationRewrite:
    """A named rewrite of one notation: call it on a conversation for a rewritten copy."""

    name: str
    description: str
    pattern: re.Pattern[str] = field(repr=False)
    replace: Replacement = field(repr=False)

    def text(self, text: str) -> Rewritten:
        """One text rewritten, with the edits made."""
        return substitute(self.pattern, self.replace, text)

    def __call__(self, conversation: dict[str, Any]) -> dict[str, Any]:
        return rewrite_conversation(conversation, self).conversation


REWRITES: tuple[NotationRewrite, ...] = (
    NotationRewrite("iso_date_to_written", '"2024-05-19" as "May 19, 2024"', _ISO_DATE, _iso_to_written),
    NotationRewrite("iso_date_to_slashed", '"2024-05-19" as "5/19/2024"', _ISO_DATE, _iso_to_slashed),
    NotationRewrite(
        "written_date_to_iso",
        '"May 19, 2024" (or "19th May 2024") as "2024-05-19"',
        _WRITTEN_DATE,
        _written_to_iso,
    ),
    NotationRewrite("dollar_sign_to_usd", '"$1,000.50" as "1,000.50 USD"', _DOLLARS, _dollar_to_usd),
    NotationRewrite(
        "dollars_add_grouping_and_cents", '"$1000" as "$1,000.00"', _DOLLARS, _add_grouping_and_cents
    ),
    NotationRewrite(
        "dollars_drop_grouping_and_cents", '"$1,000.00" as "$1000"', _DOLLARS, _drop_grouping_and_cents
    ),
    NotationRewrite("clock_24h_to_12h", '"22:00" as "10:00 PM"', _CLOCK_24H, _clock_24h_to_12h),
)
BY_NAME = {rewrite.name: rewrite for rewrite in REWRITES}


# --- rewriting a conversation -------------------------------------------------------------

REWRITTEN_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class RewrittenConversation:
    conversation: dict[str, Any]
    # Per turn, the edits made in its answer's text, in the offsets findings use.
    answer_edits: dict[int, tuple[Edit, ...]]
    values: int  # values rewritten, in answers and user messages alike
    answers_changed: int  # turns whose answer's text changed


def _turns(conversation: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The messages of each turn, by the contract's rule: a flat list is split at each user
    message, and what comes before the first joins it."""
    if isinstance(conversation.get("turns"), list):
        return [list(turn.get("messages") or []) for turn in conversation["turns"]]
    return split_into_turns(list(conversation.get("messages") or []))


def _rewrite_message(message: dict[str, Any], rewrite: NotationRewrite) -> tuple[Edit, ...]:
    """Rewrite a message's text in place; the edits are in the offsets of its whole text (a
    list's text parts joined by newlines)."""
    content = message.get("content")
    if isinstance(content, str):
        rewritten = rewrite.text(content)
        message["content"] = rewritten.text
        return rewritten.edits
    if not isinstance(content, list):
        return ()
    edits: list[Edit] = []
    offset = new_offset = 0
    for part in content:
        if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
            continue
        rewritten = rewrite.text(part["text"])
        edits.extend(
            Edit(e.start + offset, e.end + offset, e.new_start + new_offset, e.new_end + new_offset)
            for e in rewritten.edits
        )
        offset += len(part["text"]) + 1
        new_offset += len(rewritten.text) + 1
        part["text"] = rewritten.text
    return tuple(edits)


def _has_text(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        return any(
            isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip()
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return False


def rewrite_conversation(conversation: dict[str, Any], rewrite: NotationRewrite) -> RewrittenConversation:
    """A rewritten copy of ``conversation``, with the edits made in each turn's answer."""
    copied = copy.deepcopy(conversation)
    answer_edits: dict[int, tuple[Edit, ...]] = {}
    values = answers_changed = 0
    for index, messages in enumerate(_turns(copied)):
        answer: dict[str, Any] | None = None
        for message in messages:
            if message.get("role") == "assistant" and _has_text(message):
                answer = message  # the turn's answer is its last assistant text
        for message in messages:
            if message.get("role") not in REWRITTEN_ROLES:
                continue
            edits = _rewrite_message(message, rewrite)
            values += len(edits)
            if message is answer and edits:
                answer_edits[index] = edits
                answers_changed += 1
    return RewrittenConversation(copied, answer_edits, values, answers_changed)


# --- comparing the flags of two runs ------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """A finding of severity ``flag``, with where it stands in the original conversation."""

    external_id: str
    turn: int
    checker: str
    code: str
    # ("answer", start, end) in the original answer, ("call", call_id, path), or ("turn",)
    anchor: tuple[Any, ...]
    finding: dict[str, Any] = field(compare=False, hash=False)

    @property
    def group(self) -> tuple[str, int, str, str]:
        return (self.external_id, self.turn, self.checker, self.code)

    def describe(self) -> str:
        claim = (self.finding.get("claim") or {}).get("text")
        where = repr(claim) if claim else (self.finding.get("explanation") or "")[:120]
        return f"{self.external_id} turn {self.turn}: {self.code} {where}"


def flags_of(
    report: dict[str, Any],
    answer_edits: dict[int, tuple[Edit, ...]] | None = None,
    *,
    rewritten: bool = False,
) -> list[Flag]:
    """The report's flags, anchored in the original answers: a claim's span is mapped back
    through ``answer_edits`` when the report is of the ``rewritten`` conversation, and
    widened to the values they rewrote when it is of the original."""
    flags = []
    for finding in report["findings"]:
        if finding.get("severity") != "flag":
            continue
        turn = finding["turn"]
        claim = finding.get("claim")
        anchor: tuple[Any, ...]
        if (
            isinstance(claim, dict)
            and isinstance(claim.get("start"), int)
            and isinstance(claim.get("end"), int)
        ):
            edits = (answer_edits or {}).get(turn, ())
            place = map_back if rewritten else widen
            anchor = ("answer", *place(claim["start"], claim["end"], edits))
        elif finding.get("call_id") is not None:
            anchor = ("call", finding["call_id"], finding.get("path"))
        else:
            anchor = ("turn",)
        flags.append(Flag(report["external_id"], turn, finding["checker"], finding["code"], anchor, finding))
    return flags


@dataclass
class FlagChanges:
    added: list[Flag] = field(default_factory=list)
    removed: list[Flag] = field(default_factory=list)

    def __iadd__(self, other: FlagChanges) -> FlagChanges:
        self.added.extend(other.added)
        self.removed.extend(other.removed)
        return self

    @property
    def unchanged(self) -> bool:
        return not self.added and not self.removed


def _overlap(a: Flag, b: Flag) -> bool:
    if not a.anchor[0] == b.anchor[0] == "answer":
        return False
    (_, a_start, a_end), (_, b_start, b_end) = a.anchor, b.anchor
    return bool(a_start < b_end and b_start < a_end)


def compare_flags(before: list[Flag], after: list[Flag]) -> FlagChanges:
    """The flags only one of two runs raised.

    Flags pair first as equal (conversation, turn, checker, code, anchor), each pairing at
    most once; what is left pairs by overlapping answer spans within the same conversation,
    turn, checker and code, since a checker may take a word more or less around a value's
    other spelling (a currency or time zone after it) and still be raising the same flag.
    The rest were added or removed.
    """
    added = list(after)
    removed = []
    for flag in before:
        if flag in added:
            added.remove(flag)
        else:
            removed.append(flag)
    still_removed = []
    for flag in removed:
        partner = next(
            (other for other in added if other.group == flag.group and _overlap(flag, other)), None
        )
        if partner is None:
            still_removed.append(flag)
        else:
            added.remove(partner)
    return FlagChanges(added=added, removed=still_removed)


def flag_changes(
    original_report: dict[str, Any], rewritten: RewrittenConversation, rewritten_report: dict[str, Any]
) -> FlagChanges:
    """The flags a rewrite added or removed, from the suite's reports on the conversation
    before and after it."""
    edits = rewritten.answer_edits
    return compare_flags(flags_of(original_report, edits), flags_of(rewritten_report, edits, rewritten=True))
