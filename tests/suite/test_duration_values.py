"""Lengths of time are one value however they are written (``checks/suite/durations``).

Properties over the unit table: a random duration written by any source (the user, the
system prompt, a tool's text, a string of a tool's JSON, a JSON number under a member named
for its unit, a successful call's arguments) in any spelling the table gives grounds the
same duration in any spelling in an answer, and another duration in that spelling is
flagged. The spellings are built from ``UNITS``, not listed here.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_helpers import build_conversation, build_turn
from value_roles import CHECKS, ROLES, one_turn, unsupported

from checks.suite import run_suite
from checks.suite.durations import NUMBER_WORDS, UNITS, read_durations

MINUTE_WORDS = sorted(word for word, seconds in UNITS.items() if seconds == 60)
HOUR_WORDS = sorted(word for word, seconds in UNITS.items() if seconds == 3600)
SETTINGS = [
    ("How long is the kiln firing?", "The firing runs for {}."),
    ("How long does the soil assay take?", "The assay takes {}."),
    ("How long is the ferry crossing?", "The crossing lasts {}."),
]


def spellings(minutes: int) -> list[str]:
    """Every way the table writes ``minutes``: in minutes, in hours (where whole or halves),
    as hours and minutes in words and glued, and as ISO 8601."""
    hours, rest = divmod(minutes, 60)
    out = [f"{minutes} {word}" for word in MINUTE_WORDS]
    if rest in (0, 30):
        out += [f"{Decimal(minutes) / 60} {word}" for word in HOUR_WORDS]
    out.append(f"{minutes}-minute")
    words = {n: w for w, n in NUMBER_WORDS.items()}
    if hours in words and rest in (0, 30):
        half = " and a half" if rest else ""
        out.append(f"{words[hours]}{half} hours")
    if hours:
        out += [
            f"{hours}h {rest}m" if rest else f"{hours}h",
            f"PT{hours}H{rest}M",
            f"{hours}:{rest:02d} hours",
        ]
        if rest:
            out += [f"{hours} {h} {rest} {m}" for h in HOUR_WORDS for m in MINUTE_WORDS[:2]]
            out.append(f"{hours} hours and {rest} minutes")
            out.append(f"{hours} h {rest} min")  # the hour's letter set apart, as timetables write it
            if hours == 1:
                out.append(f"an hour and {rest} minutes")
    return out


durations = st.integers(min_value=75, max_value=2000)


@CHECKS
@given(minutes=durations, data=st.data(), role=st.sampled_from(ROLES), setting=st.sampled_from(SETTINGS))
def test_a_duration_any_source_writes_grounds_it_in_any_spelling(
    minutes: int, data: Any, role: str, setting: tuple[str, str]
) -> None:
    question, sentence = setting
    answer = data.draw(st.sampled_from(spellings(minutes)))
    if role == "tool JSON number":
        source, key = str(minutes), "length_minutes"
    else:
        source, key = data.draw(st.sampled_from(spellings(minutes))), ""
    report = run_suite(one_turn(question, sentence, role, source, answer, noun="length", number_key=key))
    assert unsupported(report) == [], (source, answer)


@CHECKS
@given(
    minutes=durations,
    off=st.sampled_from([-60, -15, 15, 60]),
    data=st.data(),
    role=st.sampled_from(ROLES),
    setting=st.sampled_from(SETTINGS),
)
def test_another_duration_in_any_spelling_is_flagged(
    minutes: int, off: int, data: Any, role: str, setting: tuple[str, str]
) -> None:
    question, sentence = setting
    wrong = data.draw(st.sampled_from(spellings(minutes + off)))
    if role == "tool JSON number":
        source, key = str(minutes), "length_minutes"
    else:
        source, key = data.draw(st.sampled_from(spellings(minutes))), ""
    report = run_suite(one_turn(question, sentence, role, source, wrong, noun="length", number_key=key))
    assert [v.seconds for v in read_durations(wrong)] == [Decimal((minutes + off) * 60)]
    assert len(unsupported(report)) == 1, (source, wrong)


def test_a_clock_like_length_in_a_source_grounds_a_duration_and_words_are_read() -> None:
    """A source's "01:30:00" is a time and a length; "an hour and a half" and "half an
    hour" are lengths; an answer's "in a minute" is no claim of sixty seconds."""
    report = run_suite(
        one_turn("How long?", "It took {}.", "tool text", "01:30:00", "90 minutes", noun="run")
    )
    assert unsupported(report) == []
    spelled = {
        t: [v.seconds for v in read_durations(t)]
        for t in ("an hour and a half", "half an hour", "in a minute")
    }
    assert spelled == {"an hour and a half": [5400], "half an hour": [1800], "in a minute": []}


def test_parts_are_one_sum_only_when_each_is_below_the_unit_before_it() -> None:
    found = [(v.seconds, v.step) for v in read_durations("2 days 3 hours and 4 minutes; in 3 days, 24 hours")]
    assert found == [(Decimal(183840), 60), (Decimal(259200), 86400), (Decimal(86400), 3600)]


def test_minutes_glued_alone_ground_but_are_not_checked_in_an_answer() -> None:
    """ "45m" may be a length: a source's grounds "45 minutes", an answer's is not flagged."""
    assert [v.seconds for v in read_durations("took 45m")] == []
    report = run_suite(one_turn("How long?", "It took {}.", "tool text", "45m", "45 minutes", noun="run"))
    assert unsupported(report) == []
    report = run_suite(one_turn("How far?", "The trail is {}.", "tool text", "12 km", "45m", noun="trail"))
    assert unsupported(report) == []


def test_a_duration_between_two_clock_times_is_computed_not_invented() -> None:
    """A total that elapses between two times the results write (at the precision it is
    written) is computed_value; one that elapses between none is flagged. Two domains."""
    legs = {"legs": [{"leaves": "06:10", "arrives": "08:00"}, {"leaves": "09:05", "arrives": "11:15"}]}
    shifts = {"shift": {"start": "22:00:00", "end": "06:30:00"}}
    cases = [
        ("The whole trip takes 5 hours.", legs, "elapsed"),  # 06:10 to 11:15, to the hour
        ("The whole trip takes 7 hours.", legs, None),
        ("The night shift lasts 8 hours 30 minutes.", shifts, "elapsed"),  # past midnight
        ("The night shift lasts 8 hours 15 minutes.", shifts, None),
    ]
    for answer, result, kind in cases:
        turn = build_turn(answer, calls=[{"tool": "schedule_get", "result": result}])
        report = run_suite(build_conversation(turn))
        computed = [f["derivation"]["kind"] for f in report["findings"] if f["code"] == "computed_value"]
        assert (computed[0] if computed else None) == kind, answer
        assert bool(unsupported(report)) == (kind is None), answer


def test_weeks_abbreviated_are_weeks() -> None:
    report = run_suite(
        one_turn("How long?", "The loan runs {}.", "tool text", "2 wks", "14 days", noun="loan")
    )
    assert unsupported(report) == []
    report = run_suite(one_turn("How long?", "The loan runs {}.", "user", "2 wks", "15 days", noun="loan"))
    assert unsupported(report) == ["15 days"]


def test_a_member_named_for_a_unit_is_one_whose_last_word_is_the_unit() -> None:
    """`"waitMinutes": 45` is 45 minutes, `"cache_ttl_s": 900` 900 seconds; `"admin": 45`,
    `"holiday": 3` or `"bus": 15` only end in a unit's letters and hold no length, so they ground
    no "45 minutes", "3 days" or "15 seconds"; a rate is in the unit before its "per", and a name
    opening with a unit in the plural counts that unit unless it names a price."""
    cases = [
        ({"waitMinutes": 45}, "The queue wait is 45 minutes.", []),
        ({"kiln_hours": 3}, "The firing takes 3 hours.", []),
        ({"admin": 45}, "The queue wait is 45 minutes.", ["45 minutes"]),
        ({"holiday": 3}, "The closure lasts 3 days.", ["3 days"]),
        # A unit's letter after a separator, as JSON writes seconds and hours; "m" is no unit (metres?).
        ({"cache_ttl_s": 900}, "Cached pages live for 15 minutes.", []),
        ({"runtime_h": 2.5}, "The batch runs for 2 h 30 min.", []),
        ({"cable_m": 15}, "The splice takes 15 minutes.", ["15 minutes"]),
        ({"bus": 15}, "The ride takes 15 seconds.", ["15 seconds"]),
        # A rate's unit stands before its "per": six hours a day, no six days; no hours in km per hour.
        ({"hours_per_day": 6}, "The course meets for 6 hours each day.", []),
        ({"hours_per_day": 6}, "The course runs for 6 days.", ["6 days"]),
        ({"minutesPerDay": 50}, "You may stream for 50 minutes a day.", []),
        ({"km_per_hour": 80}, "The trip takes 80 hours.", ["80 hours"]),
        # A name that opens with a unit in the plural counts it; a singular one ("day_of_month") does not.
        ({"days_supply": 30}, "The inhaler lasts 30 days.", []),
        ({"hours_remaining": 12}, "The lease has 12 hours left.", []),
        ({"day_of_month": 15}, "Billing runs every 15 days.", ["15 days"]),
        ({"days_supply": 30}, "The inhaler lasts 30 hours.", ["30 hours"]),
        ({"days_late_fee": 25}, "The fee starts after 25 days.", ["25 days"]),  # a price, not a length
    ]
    for result, answer, flagged in cases:
        turn = build_turn(answer, calls=[{"tool": "lookup", "result": result}])
        found = [f for f in run_suite(build_conversation(turn))["findings"] if f["severity"] == "flag"]
        assert [f["claim"]["text"] for f in found] == flagged, answer


@pytest.mark.parametrize(
    ("source", "answer", "flagged"),
    [
        ("Appeals must be lodged within 30 calendar days.", "You have 720 hours to appeal.", []),
        ("Appeals must be lodged within 30 calendar days.", "You have 740 hours to appeal.", ["740 hours"]),
        ("Hold period: 14 days.", "The item is held for 14 consecutive days.", []),
        ("Hold period: 14 days.", "The item is held for fifteen calendar days.", ["fifteen calendar days"]),
    ],
)
def test_a_word_that_counts_every_day_is_part_of_the_length(
    source: str, answer: str, flagged: list[str]
) -> None:
    """ "30 calendar days" (a tribunal's deadline) or "14 consecutive days" (a library's hold) is a
    length in days on either side; another count so written is flagged."""
    turn = build_turn(answer, calls=[{"tool": "lookup", "result": source}])
    found = [f for f in run_suite(build_conversation(turn))["findings"] if f["severity"] == "flag"]
    assert [f["claim"]["text"] for f in found] == flagged


def test_a_number_grouped_by_commas_is_one_length() -> None:
    """ "3,840 hours" is 3,840 hours in a source and an answer, never 840; "12,5 hours" (a
    decimal comma) is read as no length rather than as 5 hours."""
    assert [v.seconds for v in read_durations("a backlog of 3,840 hours")] == [Decimal(3840 * 3600)]
    assert [v.step for v in read_durations("3,840.5 hours")] == [Decimal("360.0")]
    assert list(read_durations("12,5 hours")) == []
    for written, flagged in (("3,840 hours", []), ("840 hours", ["840 hours"])):
        report = run_suite(
            one_turn("How long?", "The audit logged {}.", "tool text", "3,840 hours", written, noun="audit")
        )
        assert unsupported(report) == flagged, written


def test_each_end_of_a_range_under_a_member_named_for_a_unit_is_a_length() -> None:
    """`"cure_days": "5-7"` and `"soak_minutes": "20–30"` write two lengths: either end grounds
    the length in an answer; a length past the range is flagged."""
    cases = [
        ({"cure_days": "5-7"}, "The concrete cures in 5–7 days.", []),
        ({"cure_days": "5-7"}, "The concrete cures in about 7 days.", []),
        ({"cure_days": "5-7"}, "The concrete cures in about 9 days.", ["9 days"]),
        ({"soak_minutes": "20\u201330"}, "Soak the seeds for 30 minutes.", []),
        ({"soak_minutes": "20\u201330"}, "Soak the seeds for 40 minutes.", ["40 minutes"]),
        ({"batch": "5-7"}, "The concrete cures in about 7 days.", ["7 days"]),
    ]
    for result, answer, flagged in cases:
        turn = build_turn(answer, calls=[{"tool": "lookup", "result": result}])
        found = [f for f in run_suite(build_conversation(turn))["findings"] if f["severity"] == "flag"]
        assert [f["claim"]["text"] for f in found] == flagged, (result, answer)


def test_a_word_for_a_recurrence_grounds_its_length() -> None:
    """A source's "biweekly" is every 14 days, "weekly" every 7, whoever writes it: "two weeks"
    and "7 days" are grounded; "three weeks" is not."""
    cases = [
        ("user", "Our bins are emptied biweekly.", "The bins are emptied every two weeks.", []),
        ("tool text", "Filters are replaced weekly.", "Filters are replaced every 7 days.", []),
        ("tool text", "Filters are replaced weekly.", "Filters are replaced every 10 days.", ["10 days"]),
        (
            "user",
            "Our bins are emptied biweekly.",
            "The bins are emptied every three weeks.",
            ["three weeks"],
        ),
    ]
    for role, said, answer, flagged in cases:
        if role == "user":
            turn = build_turn(answer, user=said)
        else:
            turn = build_turn(answer, calls=[{"tool": "lookup", "result": said}])
        found = [f for f in run_suite(build_conversation(turn))["findings"] if f["severity"] == "flag"]
        assert [f["claim"]["text"] for f in found] == flagged, (said, answer)
