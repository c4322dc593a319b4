"""Dates and clock times are one value however they are written (``checks/suite/values``).

Properties over the notation tables: for a random valid date or time, written in any
spelling of ``DATE_NOTATIONS`` or ``TIME_NOTATIONS`` by any source (the user, the system
prompt, a tool's text, a string of a tool's JSON, the arguments of a call that found
something), an answer that writes the same value in any spelling is not flagged, and one
that writes another value (another day, month, year, hour or minute) in that spelling is.
The conversations are made up, each on a topic drawn from several unrelated ones; the
spellings come from the tables, not from a list here.
"""

from __future__ import annotations

import json
from datetime import date, time, timedelta
from string import Formatter
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite
from checks.suite.values import DATE_NOTATIONS, TIME_NOTATIONS, read_values

DATE_SPELLINGS = [spelling for notation in DATE_NOTATIONS for spelling in notation.spellings]
TIME_SPELLINGS = [spelling for notation in TIME_NOTATIONS for spelling in notation.spellings]
ROLES = ("user", "system", "tool text", "tool json", "call argument")
# What the made-up conversations are about: an opening the value follows, on unrelated topics.
TOPICS = (
    "The library loan is due",
    "The soil samples were logged",
    "The choir rehearsal is set",
    "The firmware build was signed",
    "The ferry crossing is booked",
)
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _fields(spelling: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(spelling) if name}


def time_fields(clock: time) -> dict[str, Any]:
    h12 = clock.hour % 12 or 12
    half = "PM" if clock.hour >= 12 else "AM"
    fields: dict[str, Any] = {
        "hh": f"{clock.hour:02d}",
        "hour": clock.hour,
        "h12": h12,
        "minute": clock.minute,
        "second": clock.second,
        "AMPM": half,
        "ampm": half.lower(),
        "a_m": f"{half[0].lower()}.m.",
    }
    if clock.hour in (0, 12):
        fields["noon"] = "noon" if clock.hour == 12 else "midnight"
    return fields


def write_time(spelling: str, clock: time) -> str | None:
    """``clock`` in ``spelling``, or None where the spelling cannot write it (a spelling
    with no minutes and a time with some; "noon" for another hour)."""
    fields = time_fields(clock)
    if "minute" not in _fields(spelling) and clock.minute:
        return None
    if not _fields(spelling) <= set(fields):
        return None
    return spelling.format(**fields)


def write_date(spelling: str, day: date, clock: time) -> str:
    fields = {
        "year": day.year,
        "yy": f"{day.year % 100:02d}",
        "mm": f"{day.month:02d}",
        "dd": f"{day.day:02d}",
        "month": day.month,
        "day": day.day,
        "month_name": MONTHS[day.month - 1],
        "mon": MONTHS[day.month - 1][:3],
        "weekday": WEEKDAYS[day.weekday()],
        "day_ordinal": _ordinal(day.day),
        **time_fields(clock),
    }
    return spelling.format(**fields)


def has_year(spelling: str) -> bool:
    return bool(_fields(spelling) & {"year", "yy"})


def writes_a_time(spelling: str) -> bool:
    return bool(_fields(spelling) & {"hh", "hour", "h12"})


def half_open(spelling: str, clock: time) -> bool:
    """Whether the written time leaves its half of the day open: an hour of one digit and
    no half-day mark ("5:00")."""
    marked = bool(_fields(spelling) & {"AMPM", "ampm", "a_m", "noon"})
    return not marked and "{hour}" in spelling and 1 <= clock.hour <= 9


def conversation(source: str, role: str, answer: str) -> dict[str, Any]:
    """A made-up conversation in which one source (``role``) writes ``source``."""
    if role == "tool text":
        result: Any = source
    elif role == "tool json":
        result = {"note": source, "status": "ok"}
    else:
        result = {"status": "ok"}
    user = source if role == "user" else "Could you check this for me?"
    args = {"when": source} if role == "call argument" else {}
    turn = build_turn(answer, calls=[{"tool": "lookup", "args": args, "result": result}], user=user)
    built = build_conversation(turn)
    built["system"] = source if role == "system" else "Answer from the records you look up."
    return built


def flags(built: dict[str, Any]) -> list[dict[str, Any]]:
    report = run_suite(built)
    return [f for f in report["findings"] if f["code"] == "unsupported_value"]


def flags_within(found: list[dict[str, Any]], start: int, end: int) -> list[dict[str, Any]]:
    return [f for f in found if start <= f["claim"]["start"] < end]


dates = st.dates(min_value=date(2000, 1, 1), max_value=date(2099, 12, 31))
# Whole hours and the hours "noon" and "midnight" name come often, so that every spelling
# of the tables (some write no minutes, some only those hours) is drawn with a time it writes.
times = st.one_of(
    st.times().map(lambda t: t.replace(microsecond=0)),
    st.builds(time, st.integers(0, 23)),
    st.builds(time, st.sampled_from([0, 12]), st.integers(0, 59)),
)


def _source_text(spelling: str, day: date, clock: time, answer_spelling: str) -> str:
    text = write_date(spelling, day, clock)
    if writes_a_time(answer_spelling) and not writes_a_time(spelling):
        text += f" at {clock.hour:02d}:{clock.minute:02d}:{clock.second:02d}"  # what the answer adds
    return text


# --- dates --------------------------------------------------------------------------------


@SETTINGS
@given(
    day=dates,
    clock=times,
    source=st.sampled_from(DATE_SPELLINGS),
    said=st.sampled_from(DATE_SPELLINGS),
    role=st.sampled_from(ROLES),
    topic=st.sampled_from(TOPICS),
)
def test_a_date_in_any_notation_grounds_the_same_date_in_any_other(
    day: date, clock: time, source: str, said: str, role: str, topic: str
) -> None:
    answer = f"{topic} for {write_date(said, day, clock)}."
    built = conversation(f"{topic} for {_source_text(source, day, clock, said)}.", role, answer)
    assert flags(built) == []


def _changed_date(day: date, part: str, data: st.DataObject) -> date:
    """``day`` with one part changed, the others kept (a valid date)."""
    while True:
        if part == "year":
            other = day.replace(year=data.draw(st.integers(2000, 2099).filter(lambda y: y != day.year)))
            if other != day:
                return other
        elif part == "month":
            month = data.draw(st.integers(1, 12).filter(lambda m: m != day.month))
            try:
                return day.replace(month=month)
            except ValueError:
                continue
        else:
            start = day.replace(day=1)
            days = ((start + timedelta(days=32)).replace(day=1) - start).days
            return day.replace(day=data.draw(st.integers(1, days).filter(lambda d: d != day.day)))


@SETTINGS
@given(
    day=dates.filter(lambda d: not (d.month == 2 and d.day == 29)),
    clock=times,
    source=st.sampled_from(DATE_SPELLINGS),
    said=st.sampled_from(DATE_SPELLINGS),
    role=st.sampled_from(ROLES),
    topic=st.sampled_from(TOPICS),
    part=st.sampled_from(["day", "month", "year"]),
    data=st.data(),
)
def test_another_date_in_the_same_notation_is_flagged(
    day: date, clock: time, source: str, said: str, role: str, topic: str, part: str, data: st.DataObject
) -> None:
    """A year is compared only where both sides write one: a date written without its year
    is any year's."""
    assume(part != "year" or (has_year(source) and has_year(said)))
    other = _changed_date(day, part, data)
    opening = f"{topic} for "
    written = write_date(said, other, clock)
    built = conversation(
        f"{topic} for {_source_text(source, day, clock, said)}.", role, f"{opening}{written}."
    )
    assert flags_within(flags(built), len(opening), len(opening) + len(written)) != []


# --- clock times --------------------------------------------------------------------------


@SETTINGS
@given(
    clock=times,
    source=st.sampled_from(TIME_SPELLINGS),
    said=st.sampled_from(TIME_SPELLINGS),
    role=st.sampled_from(ROLES),
    topic=st.sampled_from(TOPICS),
)
def test_a_time_in_any_notation_grounds_the_same_time_in_any_other(
    clock: time, source: str, said: str, role: str, topic: str
) -> None:
    source_text, said_text = write_time(source, clock), write_time(said, clock)
    assume(source_text is not None and said_text is not None)
    built = conversation(f"{topic} at {source_text}.", role, f"{topic} at {said_text}.")
    assert flags(built) == []


@SETTINGS
@given(
    clock=times,
    source=st.sampled_from(TIME_SPELLINGS),
    said=st.sampled_from(TIME_SPELLINGS),
    role=st.sampled_from(ROLES),
    topic=st.sampled_from(TOPICS),
    part=st.sampled_from(["hour", "minute"]),
    data=st.data(),
)
def test_another_time_in_the_same_notation_is_flagged(
    clock: time, source: str, said: str, role: str, topic: str, part: str, data: st.DataObject
) -> None:
    """A time that leaves its half of the day open ("5:00") is either half, so another hour
    is one of another hour of the 12-hour clock."""
    if part == "hour":
        other = clock.replace(hour=data.draw(st.integers(0, 23).filter(lambda h: h != clock.hour)))
        if half_open(source, clock) or half_open(said, other):
            assume(other.hour % 12 != clock.hour % 12)
    else:
        other = clock.replace(minute=data.draw(st.integers(0, 59).filter(lambda m: m != clock.minute)))
    source_text, said_text = write_time(source, clock), write_time(said, other)
    assume(source_text is not None and said_text is not None)
    opening = f"{topic} at "
    built = conversation(f"{topic} at {source_text}.", role, f"{opening}{said_text}.")
    assert flags_within(flags(built), len(opening), len(opening) + len(str(said_text))) != []


# --- the tables themselves ----------------------------------------------------------------


@SETTINGS
@given(day=dates, clock=times, spelling=st.sampled_from(DATE_SPELLINGS))
def test_every_date_spelling_reads_back_as_its_date(day: date, clock: time, spelling: str) -> None:
    text = write_date(spelling, day, clock)
    (found, *rest) = read_values(text)
    assert found.kind == "date"
    keys = found.keys()
    expected = f"date {day.isoformat()}" if has_year(spelling) else f"date --{day.month:02d}-{day.day:02d}"
    assert expected in keys
    assert all(value.kind == "time" for value in rest)  # a timestamp's time, nothing else


@SETTINGS
@given(clock=times, spelling=st.sampled_from(TIME_SPELLINGS))
def test_every_time_spelling_reads_back_as_its_time(clock: time, spelling: str) -> None:
    text = write_time(spelling, clock)
    assume(text is not None)
    (found,) = read_values(str(text))
    assert f"time {clock.hour:02d}:{clock.minute:02d}" in found.keys()
    assert (found.start, found.end) == (0, len(str(text)))


# --- a date that a next-day mark gives ----------------------------------------------------


def _asked(result: Any, args: dict[str, Any], answer: str, user: str = "Please help.") -> dict[str, Any]:
    turn = build_turn(answer, calls=[{"tool": "lookup", "result": result, "args": args}], user=user)
    return run_suite(build_conversation(turn))


def test_the_day_after_a_date_asked_for_is_the_date_of_a_time_marked_next_day() -> None:
    """A result asked for 2031-03-14 that ends a shift at "02:00:00+1" puts its end on March
    15; another day is still flagged."""
    result = {"shifts": [{"crew": "B", "start": "18:00:00", "end": "02:00:00+1"}]}
    args = {"date": "2031-03-14"}
    user = "Who works on March 14?"
    answer = "Crew B works from 18:00 on March 14, 2031 to 02:00 on March 15, 2031."
    report = _asked(result, args, answer, user)
    assert [f["code"] for f in report["findings"] if f["severity"] == "flag"] == []
    (computed,) = [f for f in report["findings"] if f["code"] == "computed_value"]
    assert computed["claim"]["text"] == "March 15, 2031"
    report = _asked(result, args, answer.replace("March 15", "March 16"), user)
    assert [f["claim"]["text"] for f in report["findings"] if f["code"] == "unsupported_value"] == [
        "March 16, 2031"
    ]


def test_a_day_mark_moves_a_date_the_result_itself_names() -> None:
    """A text result naming 2040-07-01 and a job that finishes at 00:30+1 finishes on 7/2/2040."""
    result = "Batch 2040-07-01: starts 23:10, finishes 00:30+1."
    report = _asked(result, {}, "The batch finishes at 00:30 on 7/2/2040.")
    assert [f for f in report["findings"] if f["code"] == "unsupported_value"] == []


# --- dates in words that were not read before -------------------------------------------


def test_a_wrong_written_date_is_flagged_and_a_right_one_is_not() -> None:
    """ "May 18, 2024" for a record's 2024-05-19 is flagged; "May 19, 2024" and "5/19/2024"
    are the record's date."""
    for record in ({"due": "2024-05-19"}, {"harvested": "2024-05-19"}):
        report = _asked(record, {}, "That was May 18, 2024.")
        assert [f["claim"]["text"] for f in report["findings"] if f["code"] == "unsupported_value"] == [
            "May 18, 2024"
        ]
        for said in ("May 19, 2024", "5/19/2024", "Sunday, May 19th"):
            report = _asked(record, {}, f"That was {said}.")
            assert [f for f in report["findings"] if f["code"] == "unsupported_value"] == []


def test_a_date_of_another_year_is_flagged_but_a_date_without_a_year_is_any_years() -> None:
    report = _asked({"renewal": "2024-05-19"}, {}, "It renews on 2025-05-19.")
    assert [f["claim"]["text"] for f in report["findings"] if f["code"] == "unsupported_value"] == [
        "2025-05-19"
    ]
    report = _asked({"renewal": "May 19"}, {}, "It renews on 2025-05-19.")
    assert [f for f in report["findings"] if f["code"] == "unsupported_value"] == []


def test_a_month_name_that_is_also_a_word_is_a_month_only_with_a_capital() -> None:
    """ "Option 2 may work" writes no date; "2 May" does."""
    assert [v.kind for v in read_values("Option 2 may work; march 5 is fine.")] == []
    assert [v.kind for v in read_values("Option 2 May work; March 5 is fine.")] == ["date", "date"]


def test_a_date_inside_an_identifier_is_no_date() -> None:
    assert read_values("ref ORD-2024-05-19-001 and v1.2.2024 and build/2024-05-19") == []
    report = _asked({"ref": "ORD-2024-05-19-001"}, {}, "Your reference is ORD-2024-05-19-001.")
    assert [f for f in report["findings"] if f["code"] == "unsupported_value"] == []


def test_json_escaped_newlines_do_not_glue_a_date_to_a_word() -> None:
    result = json.dumps({"notes": "Checked in.\nDue back May 19, 2024."})
    assert "\\n" in result
    report = _asked(result, {}, "It is due back on 2024-05-19.")
    assert [f for f in report["findings"] if f["code"] == "unsupported_value"] == []


def test_a_range_of_days_is_its_two_ends_on_either_side() -> None:
    """ "June 3-5, 2031" is June 3 and June 5, 2031: a source's range grounds each end, an
    answer's range is grounded only where both ends are, and a reversed range is no range."""
    assert [(v.readings, v.start, v.end) for v in read_values("Open June 3-5, 2031.")] == [
        (((2031, 6, 3),), 5, 11),
        (((2031, 6, 5),), 12, 19),
    ]
    assert [v.readings for v in read_values("from 3–5 March 2031")] == [((2031, 3, 3),), ((2031, 3, 5),)]
    assert [v.readings for v in read_values("June 5-3")] == []
    cases = [
        ("The kiln is booked June 3-5, 2031.", "tool json", "2031-06-03 to 2031-06-05", []),
        ("The kiln is booked June 3-6, 2031.", "tool json", "2031-06-03 to 2031-06-05", ["6, 2031"]),
        ("The survey ends on June 5, 2031.", "user", "Surveys run June 3-5, 2031.", []),
        ("The survey ends on June 6, 2031.", "user", "Surveys run June 3-5, 2031.", ["June 6, 2031"]),
    ]
    for answer, role, source, flagged in cases:
        found = flags(conversation(source, role, answer))
        assert [f["claim"]["text"] for f in found] == flagged, answer


def test_a_range_of_hours_with_one_half_day_mark_is_two_times() -> None:
    """ "9-11 AM" is 09:00 and 11:00, "11-1 PM" is 11:00 and 13:00: both ends are read on
    either side, the first in the mark's half of the day unless the range wraps past noon."""
    ends = {
        t: [(v.hour, v.minute) for v in read_values(t)] for t in ("9-11 AM", "9:30–10:15 p.m.", "11-1 PM")
    }
    assert ends == {
        "9-11 AM": [(9, 0), (11, 0)],
        "9:30–10:15 p.m.": [(21, 30), (22, 15)],
        "11-1 PM": [(11, 0), (13, 0)],
    }
    cases = [
        ("The hive is open from 9 AM.", "system", "Hives may be inspected 9-11 AM.", []),
        ("The hive is open from 8 AM.", "system", "Hives may be inspected 9-11 AM.", ["8 AM"]),
        ("Inspections run 9-11 AM.", "tool json", "09:00 to 11:00", []),
        ("Inspections run 9-10 PM.", "tool json", "21:00 to 23:00", ["10 PM"]),
    ]
    for answer, role, source, flagged in cases:
        found = flags(conversation(source, role, answer))
        assert [f["claim"]["text"] for f in found] == flagged, answer


def test_a_time_after_a_number_and_a_dash_is_a_time_where_no_range_ends_there() -> None:
    """ "Sat, Mar 15 — 7:45 AM" and "Bay 14 – 6:30 PM" write no range of hours (neither 15 nor 14
    starts one), but each still writes its clock time, read as a time and grounded as one."""
    assert [(v.hour, v.minute) for v in read_values("Sat, Mar 15 — 7:45 AM") if hasattr(v, "hour")] == [
        (7, 45)
    ]
    cases = [
        ("The ferry leaves Sat, Mar 15 — 7:45 AM.", '{"departs": "2031-03-15T07:45"}', []),
        ("The ferry leaves Sat, Mar 15 — 8:45 AM.", '{"departs": "2031-03-15T07:45"}', ["8:45 AM"]),
        ("Pickup at Bay 14 – 6:30 PM.", '{"bay": 14, "pickup": "18:30"}', []),
    ]
    for answer, source, flagged in cases:
        found = flags(conversation(source, "tool json", answer))
        assert [f["claim"]["text"] for f in found] == flagged, answer


def test_seconds_since_1970_under_a_member_named_for_an_instant_are_a_date_and_time() -> None:
    """`"starts_at": 1716120000` (2024-05-19 12:00 UTC), in seconds or milliseconds, grounds
    the date and the time; the same number under another name, or another day, does not."""
    cases = [
        ({"starts_at": 1716120000}, "The tasting starts May 19, 2024 at 12:00.", []),
        ({"openedTime": 1716120000000}, "The vault opened on 2024-05-19.", []),
        ({"starts_at": 1716120000}, "The tasting starts May 20, 2024.", ["May 20, 2024"]),
        ({"visitors": 1716120000}, "The tasting starts May 19, 2024.", ["May 19, 2024"]),
        # A name that only ends in the letters of one ("format", "hits") names no instant.
        ({"format": 1716120000}, "The tasting starts May 19, 2024.", ["May 19, 2024"]),
        ({"hits": 1716120000}, "The report ran on May 19, 2024.", ["May 19, 2024"]),
    ]
    for result, answer, flagged in cases:
        turn = build_turn(answer, calls=[{"tool": "lookup", "result": result}])
        found = flags(build_conversation(turn))
        assert [f["claim"]["text"] for f in found] == flagged, answer


@given(start=st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 1, 1)), days=st.integers(1, 60))
def test_each_end_of_an_iso_interval_grounds_its_date(start: date, days: int) -> None:
    """An ISO 8601 interval ("2031-06-10/2031-06-14", a marina's hold; a maintenance window of two
    timestamps) writes two dates, as a range does: each grounds its date written in words; a day
    outside it is flagged."""
    end = start + timedelta(days=days)
    for interval in (f"{start}/{end}", f"{start}T23:00:00Z/{end}T03:00:00Z"):
        source = json.dumps({"hold": interval})
        for day in (start, end):
            answer = f"The hold covers {day:%B} {day.day}, {day.year}."
            assert flags(conversation(source, "tool json", answer)) == [], (interval, answer)
        other = end + timedelta(days=1)
        answer = f"The hold covers {other:%B} {other.day}, {other.year}."
        assert len(flags(conversation(source, "tool json", answer))) == 1
