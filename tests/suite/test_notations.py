"""Values as people write them (amendment 1.1, "Notations"): each spelling grounds the value
with provenance to the span that carries it, and a near miss is still flagged."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite
from checks.suite.tokens import canonical_number, index_text, token_keys

FLIGHT = {
    "flight_number": "HAT039",
    "scheduled_departure_time_est": "22:00:00",
    "scheduled_arrival_time_est": "03:00:00+1",
    "date": "2024-05-19",
}
WALLET = {
    "payment_methods": {
        "gift_card_7091239": {"source": "gift_card", "amount": 157, "id": "gift_card_7091239"},
        "certificate_7504069": {"source": "certificate", "amount": 250, "id": "certificate_7504069"},
    }
}


def run(answer: str, result: Any, user: str = "Please help.") -> dict[str, Any]:
    turn = build_turn(answer, calls=[{"tool": "lookup", "result": result}], user=user)
    return run_suite(build_conversation(turn))


def flagged(result: dict[str, Any]) -> list[str]:
    return [f["claim"]["text"] for f in result["findings"] if f["code"] == "unsupported_value"]


def provenance(result: dict[str, Any], text: str) -> dict[str, Any]:
    """The evidence of the grounded value written ``text`` in the answer."""
    (item,) = [p for p in result["provenance"] if p["claim"]["text"] == text]
    return item["evidence"][0]


def spanned(result: dict[str, Any], text: str, tool_result: Any) -> str:
    """What the grounding span of ``text`` covers in the tool message."""
    import json

    evidence = provenance(result, text)
    content = tool_result if isinstance(tool_result, str) else json.dumps(tool_result)
    return content[evidence["start"] : evidence["end"]]


# --- clock times --------------------------------------------------------------------------


def test_a_12_hour_time_grounds_in_the_24_hour_value_it_spells() -> None:
    """ "10:00 PM" is 22:00:00; its provenance is that field's span."""
    result = run("Departure: 10:00 PM EST.", FLIGHT)
    assert flagged(result) == []
    assert spanned(result, "10:00 PM", FLIGHT) == "22:00:00"
    assert provenance(result, "10:00 PM")["path"] == "scheduled_departure_time_est"


def test_a_next_day_time_grounds_with_or_without_its_mark() -> None:
    """ "03:00 AM (next day)" and "03:00+1" are the result's "03:00:00+1"."""
    assert flagged(run("Arrival: 03:00 AM EST (next day).", FLIGHT)) == []
    assert flagged(run("Arrival: 03:00+1.", FLIGHT)) == []
    assert spanned(run("Arrival: 03:00 AM (next day).", FLIGHT), "03:00 AM", FLIGHT) == "03:00:00+1"


def test_the_other_half_of_the_day_is_still_flagged() -> None:
    """ "10:00 AM" is not 22:00:00, and "03:00 PM" is not 03:00:00+1: another time is flagged."""
    assert flagged(run("Departure: 10:00 AM.", FLIGHT)) == ["10:00 AM"]
    assert flagged(run("Arrival: 03:00 PM.", FLIGHT)) == ["03:00 PM"]


def test_a_time_in_a_result_written_in_12_hours_grounds_the_24_hour_answer() -> None:
    """A text result's "8:30 pm" grounds "20:30", and the span is where the result wrote it."""
    text = "Boarding opens at 8:30 pm at gate 4."
    result = run("Boarding: 20:30.", text)
    assert flagged(result) == []
    assert spanned(result, "20:30", text) == "8:30 pm"


def test_noon_and_midnight_name_their_hour() -> None:
    """ "12:00 noon" is 12:00, "12:00 midnight" 00:00; swapped, both are flagged."""
    result = {"opens": "12:00:00", "closes": "00:00:00"}
    assert flagged(run("Opens 12:00 noon, closes 12:00 midnight.", result)) == []
    assert flagged(run("Opens 12:00 midnight.", {"opens": "12:00:00"})) == ["12:00 midnight"]


def test_a_one_digit_hour_without_a_mark_may_be_either_half_a_two_digit_one_may_not() -> None:
    """ "5:00" may be 17:00; "05:00" is 05:00, so it is flagged against 17:00:00."""
    assert flagged(run("Departs at 5:00.", {"departs": "17:00:00"})) == []
    assert flagged(run("Departs at 05:00.", {"departs": "17:00:00"})) == ["05:00"]


# --- identifier fragments -----------------------------------------------------------------


def test_a_number_that_is_an_identifiers_digit_run_grounds_in_that_identifier() -> None:
    """ "certificate 7504069" is certificate_7504069; the span is the whole identifier."""
    result = run("Use certificate 7504069 for $250.", WALLET)
    assert flagged(result) == []
    assert spanned(result, "7504069", WALLET) == "certificate_7504069"


def test_the_last_four_digits_of_an_identifier_ground_and_a_wrong_tail_is_flagged() -> None:
    """ "ending in 1239" is gift_card_7091239's tail; "ending in 1238" is no identifier's."""
    assert flagged(run("Gift card ending in 1239.", WALLET)) == []
    assert flagged(run("Gift card ending in 1238.", WALLET)) == ["1238"]


def test_a_fragment_shorter_than_four_digits_or_from_the_middle_does_not_ground() -> None:
    """ "9123" stands inside 7091239 but is not its tail: flagged."""
    assert flagged(run("Gift card 9123 has $157.", WALLET)) == ["9123"]


# --- dates --------------------------------------------------------------------------------


def test_a_date_written_in_words_by_the_user_exempts_its_iso_spelling() -> None:
    """The user's "Sunday, May 19th" (no year) is the answer's 2024-05-19; May 20 is not."""
    user = "I want to fly on Sunday, May 19th."
    assert flagged(run("Booked for 2024-05-19.", {"ok": True}, user=user)) == []
    assert flagged(run("Booked for 2024-05-20.", {"ok": True}, user=user)) == ["2024-05-20"]


def test_a_date_in_words_in_a_result_grounds_the_iso_date() -> None:
    """A text result's "19 May 2024" grounds 2024-05-19, with its span."""
    text = "Your flight leaves on 19 May 2024 from gate 4."
    result = run("It leaves on 2024-05-19.", text)
    assert flagged(result) == []
    assert spanned(result, "2024-05-19", text) == "19 May 2024"


# --- a person's values inside a longer string -------------------------------------------


def test_a_value_the_user_typed_inside_a_longer_string_is_theirs() -> None:
    """The user's "user:mia_li_3668/LQ940Q" supplies both mia_li_3668 and LQ940Q."""
    result = run(
        "Reservation LQ940Q of mia_li_3668 is confirmed.",
        {"ok": True},
        user="Account user:mia_li_3668/LQ940Q please.",
    )
    assert flagged(result) == []


# --- amounts ------------------------------------------------------------------------------


def test_money_is_checked_whatever_its_digits() -> None:
    """ "$740" is a candidate though it has three digits: flagged when the result says 1480."""
    result = run("You were charged $740.", {"charged": 1480})
    assert flagged(result) == ["740"]
    assert [f["shape"] for f in result["findings"] if f["code"] == "unsupported_value"] == ["amount"]


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        # A print shop: a price per sheet in cents, about a figure.
        ("Each sheet costs 3.8¢, about ≈0.04 dollars.", {"sheet_price": 0.038}),
        # A water utility: a flow per hour in cubic metres, and a van's litres per 100 km.
        ("Pump P-2 moves 540 m³/h; the van averages 11.2 L/100 km.", {"pump": "P-2", "flow": 540}),
    ],
)
def test_a_sign_or_unit_dressing_a_number_makes_no_identifier(answer: str, result: Any) -> None:
    """A cent sign, an approximation sign, a unit's power and a unit per a power of ten dress a
    number as "$" does: none of them is a code no result carries."""
    assert flagged(run(answer, result)) == []


def test_a_number_an_approximation_sign_dresses_is_still_checked() -> None:
    assert flagged(run("About ≈4,120 units shipped.", {"shipped": 4120})) == []
    assert flagged(run("About ≈4,130 units shipped.", {"shipped": 4120})) == ["4,130"]


@given(thousands=st.integers(min_value=10, max_value=9999), tenth=st.integers(min_value=0, max_value=9))
def test_a_thousands_k_is_the_number_it_multiplies_on_either_side(thousands: int, tenth: int) -> None:
    """A warehouse's "12.5k units" is 12,500 and a traffic desk's "12,500 visits" is its "12.5k":
    one value in either notation, on either side; more than half its last digit off is flagged."""
    short, whole = f"{thousands}.{tenth}k", thousands * 1000 + tenth * 100
    assert flagged(run(f"You have {short} units in stock.", {"units": whole})) == []
    assert flagged(run(f"The site had {whole:,} visits.", {"visits": short})) == []
    assert flagged(run(f"You have {short} units in stock.", {"units": whole + 51})) == [short]


@pytest.mark.parametrize("mark", ["x", " x ", "×", " × "])
@pytest.mark.parametrize(
    ("sizes", "other"),
    [
        (("24", "36"), ("24", "48")),  # a print shop's poster
        (("5", "5", "11"), ("5", "6", "11")),  # a packing desk's crate
    ],
)
def test_sizes_by_x_are_one_value_however_spaced(
    mark: str, sizes: tuple[str, ...], other: tuple[str, ...]
) -> None:
    """A size a result writes in one spacing grounds it glued in the answer, in either mark, whether
    the result is JSON (which may escape "×") or text; another size is flagged."""
    written = mark.join(sizes)
    for glued in ("x".join(sizes), "×".join(sizes)):
        assert flagged(run(f"The item is {glued} in.", {"size": written})) == []
        assert flagged(run(f"The item is {glued} in.", f"size: {written}")) == []
    assert flagged(run(f"The item is {'x'.join(other)} in.", {"size": written})) == ["x".join(other)]


@pytest.mark.parametrize(
    ("marked", "joined", "other"),
    [
        ("TK-2024-0815", "TK20240815", "TK20240816"),  # a ticket desk's ticket
        ("BIN/A7/0042", "BINA70042", "BINA70043"),  # a warehouse's bin
        ("lot-77b/310", "LOT77B310", "LOT77B311"),  # a lab's sample lot
    ],
)
def test_a_codes_marks_are_notation_on_either_side(marked: str, joined: str, other: str) -> None:
    """A code with hyphens or slashes between its parts is the code without them, whichever
    side writes which; a code with another character is flagged."""
    assert flagged(run(f"Your code is {joined}.", {"code": marked})) == []
    assert flagged(run(f"Your code is {marked}.", {"code": joined})) == []
    assert flagged(run(f"Your code is {other}.", {"code": marked})) == [other]


def test_a_point_is_no_codes_mark_and_a_short_k_no_thousand() -> None:
    """A dose "1.5mg" is no "15mg"; a source's short "4k" (a screen, a race) grounds no 4,000."""
    assert flagged(run("Take 15mg twice a day.", {"dose": "1.5mg"})) == ["15mg"]
    assert flagged(run("About 4,000 units.", {"display": "4k"})) == ["4,000"]


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("The blender is rated 4.5/5 by buyers.", {"sku": "BL-7", "rating": 4.5}),  # a shop's reviews
        ("Your theory test scored 8.5/10.", {"student": "S-3", "score": 8.5}),  # a driving school
    ],
)
def test_a_score_over_its_scale_is_no_code(answer: str, result: Any) -> None:
    """A score written over its scale with a decimal ("4.5/5") is read as "3/4" is, not as a code."""
    assert flagged(run(answer, result)) == []


@pytest.mark.parametrize(
    ("answer", "result", "unsupported"),
    [
        ("The webinar starts at 15:00 in New York (EST, UTC−5).", {"webinar": "W-12", "start": "15:00"}, []),
        ("Samples post at 09:30 IST (GMT+5:30) or 04:00 (UTC+0).", {"batch": "B-4"}, ["09:30", "04:00"]),
    ],
)
def test_a_zones_offset_from_utc_is_no_value(answer: str, result: Any, unsupported: list[str]) -> None:
    """ "UTC−5" or "GMT+5:30" names a clock's zone as a unit names a measure: no code a result
    must carry, while the times beside it are still checked; a code that only opens with the
    letters ("GMT-4521") is still one."""
    assert flagged(run(answer, result)) == unsupported
    assert flagged(run("Your ticket is GMT-4521.", {"ticket": "GMT-4522"})) == ["GMT-4521"]


def test_a_small_bare_number_is_still_not_a_candidate() -> None:
    """ "740 people" has no currency beside it and fewer than four digits: not read."""
    assert flagged(run("About 740 people flew.", {"charged": 1480})) == []


def test_an_amount_with_a_currency_word_after_it_is_money() -> None:
    """ "740 USD" and "740 dollars" are amounts too."""
    assert flagged(run("You were charged 740 USD.", {"charged": 1480})) == ["740"]
    assert flagged(run("That is 1480 dollars.", {"charged": 1480})) == []


# --- counts -------------------------------------------------------------------------------

ACCOUNT = {"user_id": "mia_li_3668", "reservations": ["4WQ150", "VAAOXJ"], "open_tickets": []}


def test_a_count_of_a_noun_the_results_count_is_checked_at_any_size() -> None:
    """ "7 reservations" when the account lists two and no result says 7: flagged, with the
    noun in the claim; "2 reservations" is grounded by the list's length."""
    result = run("The account has 7 reservations.", ACCOUNT)
    assert flagged(result) == ["7 reservations"]
    assert [f["shape"] for f in result["findings"] if f["code"] == "unsupported_value"] == ["count"]
    assert flagged(run("The account has 2 reservations.", ACCOUNT)) == []


def test_a_count_of_a_noun_no_result_counts_is_not_read() -> None:
    """ "7 cats": no result holds a list of cats, so the count is prose."""
    assert flagged(run("The account has 7 cats.", ACCOUNT)) == []
    assert flagged(run("The account has 7 business reasons.", ACCOUNT)) == []


def test_a_count_of_a_part_of_a_list_is_not_read() -> None:
    """ "7 upcoming reservations" counts some of them: no list length settles it."""
    assert flagged(run("The account has 7 upcoming reservations.", ACCOUNT)) == []


def test_every_kind_of_value_is_one_shape() -> None:
    """Dates, times, durations, amounts and digit runs are each a ``value.Value``: a kind, a
    span, a canonical content, and keys that a source files and an answer looks up."""
    from checks.suite.money import read_amounts
    from checks.suite.notations import identifier_runs
    from checks.suite.value import Value
    from checks.suite.values import read_values

    text = "Sample KX-40417 arrived 2031-03-14 at 09:30, after 2 hours, for €1,250.00."
    found: list[Value] = [*read_values(text), *read_amounts(text), *identifier_runs("KX-40417")]
    assert [(value.kind, value.canonical, list(value.lookups())) for value in found] == [
        ("date", "2031-03-14", ["date 2031-03-14", "date --03-14"]),
        ("time", "09:30", ["time 09:30"]),
        ("duration", "pt7200s", ["duration 7200"]),
        ("money", "1250", ["1250"]),
        ("fragment", "40417", ["#40417"]),
        ("fragment", "0417", ["#0417"]),
    ]
    assert [text[v.start : v.end] for v in found[:4]] == ["2031-03-14", "09:30", "2 hours", "€1,250.00"]
    for value in found:
        assert set(value.lookups()) & set(value.keys()) or value.kind == "date"


# --- percents: "per cent", and the fraction a percent is -------------------------------------

SEED_STORE = {"store": "north vault", "humidity_percent": 12.5, "status": "sealed"}
RESERVOIR = "Reservoir gauge, east basin: level 87 per cent of capacity."


def test_per_cent_in_an_answer_is_a_percent_like_percent_and_the_sign() -> None:
    """ "12.5 per cent" is read as "12.5 percent" is: grounded where a source carries 12.5,
    flagged, unit and all, where none carries the percent it states."""
    assert flagged(run("The seed vault humidity is 12.5 per cent.", SEED_STORE)) == []
    assert flagged(run("The seed vault humidity is 13.5 per cent.", SEED_STORE)) == ["13.5 per cent"]
    assert flagged(run("The seed vault humidity is 13.5 Per Cent today.", SEED_STORE)) == ["13.5 Per Cent"]


def test_per_cent_in_a_source_grounds_a_percent_in_any_notation() -> None:
    """A reservoir's text result writes "87 per cent": the answer's "87%", "87 percent" and
    "87 per cent" are that value; 78 %, in any notation, is not."""
    for answer in ("The east basin is 87% full.", "It is 87 percent full.", "It is 87 per cent full."):
        assert flagged(run(answer, RESERVOIR)) == [], answer
    assert flagged(run("The east basin is 78% full.", RESERVOIR)) == ["78%"]
    assert flagged(run("The east basin is 78 per cent full.", RESERVOIR)) == ["78 per cent"]


def test_a_percent_field_named_in_two_words_has_its_complement_computed() -> None:
    """A field named "per_cent" is a percentage as one named "percent" is: the answer's
    87.5 % is its complement, a computed value, not an invented one."""
    result = run("The seed bank is 87.5% full.", {"bank": "south hall", "empty_per_cent": 12.5})
    assert flagged(result) == []
    assert [f["code"] for f in result["findings"] if f["checker"] == "evidence"] == ["computed_value"]


def test_a_fraction_a_result_carries_grounds_the_percent_it_is() -> None:
    """ "occupancy_rate": 0.125 is 12.5 %, whether the answer writes the sign, the word or
    two words; the provenance is that number; 13.5 % is still flagged."""
    campsite = {"site": "lakeside meadow", "occupancy_rate": 0.125}
    for answer in ("Occupancy is 12.5%.", "Occupancy is 12.5 percent.", "Occupancy is 12.5 per cent."):
        assert flagged(run(answer, campsite)) == [], answer
    assert spanned(run("Occupancy is 12.5%.", campsite), "12.5%", campsite) == "0.125"
    assert flagged(run("Occupancy is 13.5%.", campsite)) == ["13.5%"]


def test_a_fraction_written_with_trailing_zeros_grounds_the_percent() -> None:
    """A herd's vaccination coverage of "0.870" is 87 %; 78 % is not."""
    herd = "Herd record: vaccination coverage 0.870 across the upper pasture"
    assert flagged(run("Coverage is 87% across the herd.", herd)) == []
    assert flagged(run("Coverage is 78% across the herd.", herd)) == ["78%"]


def test_a_whole_number_is_no_fraction_of_a_percent() -> None:
    """A count of 1 does not ground "100%", nor a 2 "200%": a whole number is a count before
    it is a ratio, so only a fraction with a point is read as a percent."""
    hives = {"apiary": "orchard row", "hives_inspected": 1, "queens_marked": 2}
    assert flagged(run("Inspection covered 100% of the hives.", hives)) == ["100%"]
    assert flagged(run("Queens marked rose 200%.", hives)) == ["200%"]


# --- digits grouped by spaces ---------------------------------------------------------------

ARCHIVE = {"archive": "county records office", "shelving_metres": 10482.75, "volumes": 41200}


def test_digits_grouped_by_spaces_in_an_answer_are_one_number() -> None:
    """ "10 482.75" is one number, grounded whole, where it once read "482.75" and flagged it;
    "10 492.75" and "41 210" are flagged whole, where "41 210" was once two short tokens."""
    result = run("The archive runs to 10 482.75 metres of shelving.", ARCHIVE)
    assert flagged(result) == []
    assert [p["claim"]["text"] for p in result["provenance"]] == ["10 482.75 metres"]
    result = run("It runs to 10 492.75 metres and holds 41 210 volumes.", ARCHIVE)
    assert flagged(result) == ["10 492.75 metres", "41 210"]
    assert [f["value"] for f in result["findings"] if f["code"] == "unsupported_value"] == [
        "10492.75",
        "41210",
    ]


def test_no_break_and_narrow_spaces_group_digits_as_a_space_does() -> None:
    """A no-break or a narrow no-break space between groups is a space that groups."""
    assert flagged(run("The archive holds 41\u00a0200 volumes.", ARCHIVE)) == []
    assert flagged(run("The archive holds 41\u202f200 volumes.", ARCHIVE)) == []
    assert flagged(run("The archive holds 41\u202f210 volumes.", ARCHIVE)) == ["41\u202f210"]


def test_a_source_grouping_digits_by_spaces_grounds_the_number_in_any_grouping() -> None:
    """A seismograph log writes "41 200" events: "41,200" and "41200" are that number, with
    the provenance on "41 200"; "41,210" is not. A JSON string does the same, escaped or not."""
    log = "Seismograph station ridge-north: 41 200 events recorded this year."
    for answer in ("The station recorded 41,200 events.", "The station recorded 41200 events."):
        result = run(answer, log)
        assert flagged(result) == [], answer
    assert spanned(run("It recorded 41,200 events.", log), "41,200", log) == "41 200"
    assert flagged(run("The station recorded 41,210 events.", log)) == ["41,210"]
    assert flagged(run("It recorded 41200 events.", {"events": "41\u00a0200"})) == []


def test_a_four_digit_head_is_no_group_head() -> None:
    """ "in 2024 300 volunteers" is a year and a count, never 2024300: the year is read on
    its own, and no source writing it that way carries 2024300."""
    from checks.suite.evidence import read_answer
    from checks.suite.options import EvidenceOptions
    from checks.suite.tokens import index_text

    answer = "In 2024 300 volunteers planted the riverbank."
    assert [c.value for c in read_answer(answer, EvidenceOptions())] == ["2024"]
    assert flagged(run(answer, {"season": 2024, "volunteers": 300})) == []
    assert "2024300" not in index_text(answer)


def test_a_run_that_may_be_a_list_is_grounded_by_either_reading() -> None:
    """ "plots 1 200 300" may be three plot numbers or 1200300: a garden listing the plots
    apart grounds it, a source writing 1 200 300 grounds 1,200,300, and a run of which one
    number is carried by no source and the whole by none is flagged."""
    garden = {"garden": "community allotments", "plots": [1, 200, 300]}
    assert flagged(run("You hold plots 1 200 300.", garden)) == []
    assert flagged(run("You hold plots 1 200 301.", garden)) == ["1 200 301"]
    assert flagged(run("The tally reached 1,200,300.", "Tally to date: 1 200 300")) == []


def test_digits_are_never_grouped_across_a_line_break_or_a_malformed_group() -> None:
    """A line break, a group of two or four digits, a head of four: no number is grouped."""
    from checks.suite.tokens import index_text, tokenize

    assert "41200" not in index_text("Events\n41\n200")
    assert flagged(run("Events recorded: 41,200.", "Events\n41\n200")) == ["41,200"]
    not_grouped = {
        "41\n200": "41200",
        "41 20": "4120",
        "41 2000": "412000",
        "4120 300": "4120300",
        "41  200": "41200",
        "1.5 300": "1.5300",
        "41 200,5": "41200",
    }
    for text, joined in not_grouped.items():
        assert all(" " not in t.text and "\n" not in t.text for t in tokenize(text, grouped=True)), text
        assert joined not in index_text(text), text


@given(
    number=st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False, allow_infinity=False),
    zeros=st.integers(0, 2),
    unit=st.sampled_from(["", "%", "ms", "gb", "kib"]),
    dress=st.sampled_from(["", "$", "#", "~"]),
)
def test_a_source_files_each_token_under_the_keys_one_definition_gives(
    number: Decimal, zeros: int, unit: str, dress: str
) -> None:
    """``index_text`` files every token under ``token_keys``, the definition ``span_of``
    reads a token by too: a number with trailing zeros or a glued unit is filed under its
    canonical spelling, so an answer's value needs no list of spellings to look up."""
    written = f"{number:f}" + ("0" * zeros if "." in f"{number:f}" else "") + unit
    token = dress + written
    keys = token_keys(token)
    assert keys <= index_text(f"Noted: {token} today.")
    assert canonical_number(f"{number:f}") in keys


def test_points_that_group_are_read_where_the_writing_says_so() -> None:
    """ "2.750.300" (two groups) and "10.482,75" (a group and a decimal comma) are the numbers
    2750300 and 10482.75 on either side; "41.200" alone stays a decimal."""

    def flagged(source: str, answer: str) -> list[str]:
        turn = build_turn(f"The tally is {answer}.", calls=[{"tool": "census", "result": {"note": source}}])
        report = run_suite(build_conversation(turn))
        return [f["claim"]["text"] for f in report["findings"] if f["code"] == "unsupported_value"]

    assert flagged("2750300 seeds", "2.750.300") == []
    assert flagged("2.750.300 seeds", "2,750,300") == []
    assert flagged("10.482,75 litres", "10,482.75") == []
    assert flagged("10482.75 litres", "10.482,75") == []
    assert flagged("2750300 seeds", "2.750.310") == ["2.750.310"]
    assert flagged("10.482,75 litres", "10,482.76") == ["10,482.76"]
