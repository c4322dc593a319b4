"""The evidence checker: every number and identifier of an answer is looked up in what was read."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import run_suite
from checks.suite.evidence import CORRECTION_PREFIX

PORTS = {
    "switch": "lva1-mds01",
    "ports": [
        {"interface": "fc1/1", "oper_status": "up", "fcid": "0x650000"},
        {"interface": "fc1/3", "oper_status": "down", "fcid": None},
    ],
}


def run(answer: str, result: Any = PORTS, options: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    turn = build_turn(answer, calls=[{"tool": "show_ports", "result": result}], **kw)
    return run_suite(build_conversation(turn), options)


def codes(result: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] == "evidence" and f["code"] == code]


def flagged(result: dict[str, Any]) -> list[str]:
    return [f["value"] for f in codes(result, "unsupported_value")]


def flagged_after(answer: str, record: Any) -> list[str]:
    """The claims flagged unsupported in ``answer``, written after one read of ``record``."""
    result = run_suite(build_conversation(build_turn(answer, calls=[{"tool": "read", "result": record}])))
    return [f["claim"]["text"] for f in result["findings"] if f["code"] == "unsupported_value"]


def grounded(result: dict[str, Any]) -> list[str]:
    return [p["value"] for p in result["provenance"]]


# --- reading an answer --------------------------------------------------------------------


def test_it_reads_a_value_out_of_markdown_table_cells() -> None:
    """`| **fc1/3** |` reads fc1/3, which the result carries."""
    result = run("| port | state |\n|---|---|\n| **fc1/3** | down |")
    assert grounded(result) == ["fc1/3"]
    assert flagged(result) == []


def test_it_keeps_a_comma_between_digits_and_splits_on_any_other() -> None:
    """41,200 is one number (41200); 1204,1205 are two; a comma after a value splits it off."""
    result = run(
        "Totals: 41,200 rows, ids 1204,1205, host fc1/1,",
        {"rows": 41200, "ids": [1204, 1205], "host": "fc1/1"},
    )
    assert sorted(grounded(result)) == ["1204", "1205", "41200", "fc1/1"]
    assert flagged(result) == []


def test_it_matches_whole_tokens_never_substrings() -> None:
    """1204 does not hide inside 12045, and fc1/3 is not found inside fc1/30."""
    result = run("Serial 1204 on fc1/3.", {"serial": 12045, "port": "fc1/30"})
    assert sorted(flagged(result)) == ["1204", "fc1/3"]


def test_it_compares_numbers_in_canonical_form_on_both_sides() -> None:
    """2048.0 in a result grounds 2048 in the answer, and 2,048.50 grounds 2048.5."""
    result = run("Block size 2048, ratio 2,048.50.", {"block": 2048.0, "ratio": 2048.5})
    assert flagged(result) == []
    assert sorted(grounded(result)) == ["2048", "2048.5"]


def test_it_keeps_a_long_serial_as_written() -> None:
    """A 20-digit serial is never rounded through a float: a neighbour serial stays unsupported."""
    result = run("Serials 12345678901234567890 and 12345678901234567891.", {"serial": "12345678901234567890"})
    assert grounded(result) == ["12345678901234567890"]
    assert flagged(result) == ["12345678901234567891"]


def test_it_matches_hex_with_and_without_the_0x_prefix() -> None:
    """0x650000 in the result grounds 650000 in the answer, and the other way round."""
    assert flagged(run("FCID 650000.")) == []
    assert flagged(run("FCID 0xef0101.", {"fcid": "ef0101"})) == []


def test_it_ignores_case_and_end_decoration() -> None:
    """`FC1/3`, (fc1/3) and fc1/3: are all fc1/3."""
    result = run("Ports `FC1/3`, (fc1/3) and fc1/3: down.")
    assert flagged(result) == []
    assert result["turns"][0]["candidates"] == 3


def test_it_leaves_prose_unexamined() -> None:
    """Small numbers, 24/7, ordinals, a 4-port switch and digit-free words are not candidates
    (nor is a count of links, which no result counts)."""
    result = run("We watch it 24/7; the 3rd of 12 links on a 4-port card failed twice in 365 runs.")
    assert result["turns"][0]["candidates"] == 0
    # So are a compound's number with a decimal or an ordinal: a 2.5-ton hoist, a 2nd-floor office.
    result = run("The 2.5-ton hoist is in the 2nd-floor bay.")
    assert result["turns"][0]["candidates"] == 0
    # But a number hyphened to a unit's word is a measure, checked as one: a 15.6-inch screen.
    assert flagged(run("It has a 15.6-inch screen.", {"screen_in": 13.3})) == ["15.6"]
    assert flagged(run("It has a 15.6-inch screen.", {"screen_in": 15.6})) == []
    # A length of time is a value at any size, like an amount (``durations``).
    assert flagged(run("The 3rd of 12 links failed twice in 365 days.")) == ["pt31536000s"]


def test_it_reads_a_number_with_a_short_glued_tail() -> None:
    """1204itw is a candidate, and a result carrying 1204 grounds it."""
    assert flagged(run("Ticket 1204itw.", {"ticket": 1204})) == []
    assert flagged(run("Ticket 1205itw.", {"ticket": 1204})) == ["1205itw"]


def test_it_reads_identifiers_of_many_shapes() -> None:
    """Versions, hostnames with digits, dates and clock times are candidates, and an ISO
    timestamp is its date and its time."""
    answer = "v2.4.1 on db-07 at 2026-11-29T08:00:00Z, then 2026-11-30 10:00, then 11:45."
    result = run(answer, {"x": 1})
    assert sorted(flagged(result)) == sorted(
        ["v2.4.1", "db-07", "2026-11-29", "08:00", "2026-11-30", "10:00", "11:45"]
    )


def test_it_reads_the_parts_of_a_carried_timestamp() -> None:
    """A result's 2026-11-30T10:00:00Z grounds the answer's 2026-11-30, 10:00 and 2026."""
    result = run("On 2026-11-30 at 10:00 (November 30, 2026).", {"at": "2026-11-30T10:00:00Z"})
    assert flagged(result) == []


def test_it_reads_a_figure_whatever_its_digit_count_only_with_figures_on() -> None:
    """53.2% and 6.3 TB are candidates with figures on; with figures off they are prose."""
    result = run("Used 53.2% of 6.3 TB.", {"x": 1})
    assert sorted(flagged(result)) == ["53.2", "6.3"]
    claim = codes(result, "unsupported_value")[1]["claim"]
    assert claim["text"] in ("6.3 TB", "53.2%")
    assert flagged(run("Used 53.2% of 6.3 TB.", {"x": 1}, {"evidence": {"figures": False}})) == []


@pytest.mark.parametrize(
    ("result", "answer", "right", "wrong"),
    [
        ({"kennel": "K-4", "rate_per_dog_night": 12}, "Boarding is ${}/dog/night.", "12.00", "14.00"),
        ({"seed": "basil", "price_per_gram": 0.35}, "Basil seed is {}/g, sold loose.", "0.35", "0.45"),
    ],
)
def test_it_reads_a_number_written_per_units_with_slashes_as_that_number(
    result: dict[str, Any], answer: str, right: str, wrong: str
) -> None:
    """ "$12.00/dog/night" is 12 per dog and night, as "$12.00 per dog per night" is: the result's
    12 grounds it, and a rate no result carries is flagged as the number it writes."""
    assert flagged(run(answer.format(right), result)) == []
    assert flagged(run(answer.format(wrong), result)) == [wrong.rstrip("0").rstrip(".")]


def test_it_grounds_a_figure_under_its_glued_spelling() -> None:
    """An answer's 1007 us meets a text result's 1007us."""
    assert flagged(run("Latency was 1007 us.", "latency: 1007us")) == []


def test_it_honours_min_digits() -> None:
    """With min_digits 3, an invented three-digit count is a candidate."""
    assert flagged(run("There are 412 ports.", {"x": 1}, {"evidence": {"min_digits": 3}})) == ["412"]
    assert flagged(run("There are 412 ports.", {"x": 1})) == []


def test_it_matches_declared_shapes_first_and_whole_token() -> None:
    """A declared shape catches a digit-free code; a longer token that merely contains it is not it."""
    options = {"evidence": {"shapes": [{"name": "site", "pattern": "[a-z]{3}-[a-z]{3}"}]}}
    result = run("Site abc-xyz and abc-xyzw.", {"x": 1}, options)
    assert [(f["value"], f["shape"]) for f in codes(result, "unsupported_value")] == [("abc-xyz", "site")]


def test_it_bounds_a_catastrophic_shape_in_time() -> None:
    """A pattern that backtracks exponentially is abandoned quickly; the answer is still read."""
    options = {"evidence": {"shapes": [{"name": "evil", "pattern": "(a+)+b"}]}}
    answer = "Node " + "a" * 40 + " carries 0xef0101."
    started = time.perf_counter()
    result = run(answer, {"x": 1}, options)
    assert time.perf_counter() - started < 2.0
    assert flagged(result) == ["0xef0101"]


def test_a_long_answer_is_read_to_its_last_value() -> None:
    """Past 20,000 tokens the answer was not read, and a value there went unchecked; the
    answer's size is bounded where it is accepted, and within it every token is read."""
    answer = "word " * 20_010 + "0xef0101"
    result = run(answer, {"x": 1})
    assert result["turns"][0]["unread"] == 0
    assert flagged(result) == ["0xef0101"]


# --- the evidence -------------------------------------------------------------------------


def test_it_reports_the_call_path_and_span_that_carry_a_value() -> None:
    """Provenance names the call, the JSON path of the leaf and the span within the message."""
    result = run("Port fc1/3 is down.")
    (entry,) = result["provenance"]
    text = json.dumps(PORTS)
    evidence = entry["evidence"][0]
    assert entry["claim"] == {"text": "fc1/3", "start": 5, "end": 10}
    assert evidence["call_id"] == "call-1"
    assert evidence["path"] == "ports[1].interface"
    assert text[evidence["start"] : evidence["end"]] == "fc1/3"


def test_it_reads_keys_as_well_as_leaves() -> None:
    """A key of a result (here a host name) is evidence too, with the member's path."""
    result = run("Host web-0042 answered.", {"hosts": {"web-0042": {"ok": True}}})
    assert result["provenance"][0]["evidence"][0]["path"] == "hosts.web-0042"


def test_it_reads_a_json_result_followed_by_a_note_as_both() -> None:
    """The JSON part gives paths; the note after it is text with an empty path."""
    text = '{"id": "job-7781"} (note: retried on node-0003)'
    result = run("Job job-7781 retried on node-0003.", text)
    paths = {p["value"]: p["evidence"][0]["path"] for p in result["provenance"]}
    assert paths == {"job-7781": "id", "node-0003": ""}


def test_it_takes_only_the_complete_leaves_of_cut_off_json() -> None:
    """A result cut mid-string grounds its complete leaves, never the half-written one."""
    text = '{"rows": [{"id": "srv-1001"}, {"id": "srv-10'
    result = run("Servers srv-1001 and srv-10.", text)
    assert grounded(result) == ["srv-1001"]
    assert flagged(result) == ["srv-10"]


def test_an_earlier_answer_is_no_evidence_and_a_query_backs_only_what_it_found() -> None:
    """A value the model said in an earlier answer backs nothing. A call's arguments back
    what the answer restates of what that call found (the query is part of its receipt),
    while the arguments checker still flags the argument the model made up; a call that
    found nothing backs nothing with its arguments."""
    first = build_turn("The ticket is INC-55120.")
    found = build_turn(
        "Ticket INC-55120 is open.",
        calls=[{"tool": "ticket_get", "args": {"id": "INC-55120"}, "result": {"state": "open"}}],
    )
    missing = build_turn(
        "Ticket INC-55120 is open.",
        calls=[{"tool": "ticket_get", "args": {"id": "INC-55120"}, "result": {"found": False}}],
    )
    result = run_suite(build_conversation(first, found))
    assert [(f["turn"], f["value"]) for f in codes(result, "unsupported_value")] == [(0, "inc-55120")]
    [argument] = [f for f in result["findings"] if f["code"] == "unsupported_argument"]
    assert (argument["turn"], argument["value"]) == (1, "inc-55120")
    [backed] = [p for p in result["provenance"] if p["turn"] == 1]
    assert backed["evidence"] == [
        {"call_id": "call-1", "path": "id", "start": 8, "end": 17, "of": "arguments"}
    ]

    result = run_suite(build_conversation(missing))
    assert [(f["turn"], f["value"]) for f in codes(result, "unsupported_value")] == [(0, "inc-55120")]


def test_a_value_invented_once_is_flagged_where_it_first_appears_and_noted_where_it_recurs() -> None:
    """One invented value said in three answers is one defect: a flag in the first, a note
    (info) in the others naming it; a new invented value in a later answer is flagged."""
    reading = {"tool": "greenhouse_log", "result": {"bed": "B-12", "humidity": "61%"}}
    first = build_turn("Bed B-12 was watered by sensor SN-40917.", calls=[reading])
    second = build_turn("Yes, SN-40917 logged it.")
    third = build_turn("SN-40917 and SN-55302 both report bed B-12.")
    result = run_suite(build_conversation(first, second, third))
    assert [(f["turn"], f["value"]) for f in codes(result, "unsupported_value")] == [
        (0, "sn-40917"),
        (2, "sn-55302"),
    ]
    notes = codes(result, "repeated_unsupported_value")
    assert [(f["turn"], f["value"], f["severity"], f["first_turn"]) for f in notes] == [
        (1, "sn-40917", "info", 0),
        (2, "sn-40917", "info", 0),
    ]


def test_a_failed_or_empty_query_backs_nothing_in_an_unrelated_domain() -> None:
    """A search that failed or returned an empty list is no receipt for what it asked."""
    for result in ('{"error": "upstream unavailable", "status": "error"}', {"samples": []}):
        turn = build_turn(
            "Batch LOT-88213 passed its assay.",
            calls=[{"tool": "assay_search", "args": {"lot": "LOT-88213"}, "result": result}],
        )
        report = run_suite(build_conversation(turn))
        assert [f["value"] for f in codes(report, "unsupported_value")] == ["lot-88213"], result


def test_it_never_takes_its_own_correction_as_a_person_supplying_values() -> None:
    """A user message that is the suite's correction exempts nothing it quotes."""
    first = build_turn("FCID 0xef0101.", calls=[{"tool": "show_ports", "result": PORTS}])
    second = build_turn("FCID 0xef0101.", user=f"{CORRECTION_PREFIX} …\n\n`0xef0101`")
    result = run_suite(build_conversation(first, second))
    assert [f["turn"] for f in codes(result, "unsupported_value")] == [0]
    # Not exempted by the correction quoting it: still unsupported, noted as said again.
    assert [f["turn"] for f in codes(result, "repeated_unsupported_value")] == [1]


def test_it_exempts_what_the_user_and_the_system_prompt_supplied() -> None:
    """Values a person supplied are never flagged and are not provenance either."""
    data = build_conversation(
        build_turn("Switch lva1-mds01, tenant t-9931.", user="Check lva1-mds01.", calls=[]),
    )
    data["system"] = "Tenant is t-9931."
    result = run_suite(data)
    assert flagged(result) == []
    assert result["provenance"] == []


def test_it_exempts_configured_values_and_patterns() -> None:
    """`exempt` strings (both hex spellings) and patterns (whole-token) are never flagged."""
    options = {"evidence": {"exempt": ["0xef0101", {"pattern": "INC[0-9]{6}"}]}}
    result = run("FCID ef0101, ticket INC123456, ticket INC1234567.", {"x": 1}, options)
    assert flagged(result) == ["inc1234567"]


def test_a_clock_time_is_one_value_in_its_12_and_24_hour_spellings() -> None:
    """The user's "8 pm" exempts 20:00, and a result's "8 pm" grounds 20:00 (amendment 1.1);
    a result's "8 am" grounds no 20:00."""
    assert flagged(run("Scheduled for 20:00.", {"x": 1}, user="Book it for 8 pm.")) == []
    assert flagged(run("Scheduled for 20:00.", "scheduled at 8 pm")) == []
    assert flagged(run("Scheduled for 20:00.", "scheduled at 8 am")) == ["20:00"]


def test_a_users_date_exempts_its_other_spellings() -> None:
    """The user's "November 30, 2026" exempts 2026-11-30 and 11/30/2026."""
    result = run("Due 2026-11-30 (11/30/2026).", {"x": 1}, user="It is due November 30, 2026.")
    assert flagged(result) == []


def test_an_absence_envelope_grounds_what_it_checked_not_what_it_was_asked() -> None:
    """{"absent": true, "looked_for": X, "checked": Y}: Y is evidence, X is not."""
    envelope = {"absent": True, "looked_for": "4417-ganymede", "checked": ["backup-db-02"]}
    turn = build_turn(
        "No record for 4417-ganymede in backup-db-02.",
        calls=[{"tool": "backup_status", "args": {"machine": "4417-ganymede"}, "result": envelope}],
    )
    result = run_suite(build_conversation(turn))
    assert flagged(result) == ["4417-ganymede"]
    assert grounded(result) == ["backup-db-02"]


def test_a_result_of_millions_of_characters_is_read_whole() -> None:
    """A result of 2 MB (past the 200,000 tokens at which the index once stopped, and then
    flagged nothing) grounds a value in its last rows and flags one in none of its rows, as a
    small one does: an invented identifier, an amount no row holds."""
    cases = (
        ("parcels", lambda i: {"parcel": f"PCL-{i:07d}", "weight_kg": f"{i % 900}.5", "state": "sorted"}),
        ("tickets", lambda i: {"ticket": f"TCK-{i:07d}", "fee": f"{i % 700}.25", "state": "queued"}),
    )
    for key, row in cases:
        rows = [row(i) for i in range(33_000)]
        last = rows[-1]
        first_key, amount_key = list(last)[:2]
        invented = f"{first_key.upper()[:3]}-9999999"
        answer = f"{last[first_key]} is listed at {last[amount_key]}; {invented} at 123456.78."
        result = run(answer, {key: rows})
        assert len(json.dumps({key: rows})) > 2_000_000
        assert result["turns"][0]["index_truncated"] is False
        assert sorted(flagged(result)) == ["123456.78", invented.lower()], key
        assert last[first_key].lower() in grounded(result)


def test_a_huge_result_is_read_whole() -> None:
    """A 5,000-row table is indexed whole: its last row grounds the answer. (How fast is the
    benchmarks' business: bench/suite_throughput.py.)"""
    rows = [{"id": f"vol-{i:05d}", "size_gb": i * 3, "state": "ok"} for i in range(5000)]
    result = run("Volume vol-04999 holds 14997 GB.", {"volumes": rows})
    assert result["turns"][0]["index_truncated"] is False
    assert flagged(result) == []
    assert result["provenance"][0]["evidence"][0]["path"] == "volumes[4999].id"


# --- derived numbers ----------------------------------------------------------------------

CLUSTERS = {
    "clusters": [
        {"name": "A", "region": "eu", "used_tb": 120.0, "total_tb": 200.0},
        {"name": "B", "region": "eu", "used_tb": 46.0, "total_tb": 112.0},
        {"name": "C", "region": "us", "used_tb": 10.0, "total_tb": 50.0},
    ],
    "disk": {"used_pct": 61.5, "bytes": 6_442_450_944},
}


def derivation(answer: str, result: Any = CLUSTERS, options: dict[str, Any] | None = None) -> dict | None:
    found = codes(run(answer, result, options), "computed_value")
    return found[0]["derivation"] if found else None


def test_it_names_a_rounding_at_the_answers_precision() -> None:
    """61.5 written as 62% is a rounding; as 63% it is nothing."""
    assert derivation("Disk at 62%.") == {"kind": "rounded", "from": "disk.used_pct"}
    assert derivation("Disk at 63%.") is None


def test_it_names_a_unit_conversion_in_steps_of_1000_or_1024() -> None:
    """6,442,450,944 bytes is 6 GiB (÷ 1024^3); 6.5 GB is no conversion of it."""
    assert derivation("Size 6 GB.")["kind"] == "unit-scale"
    assert derivation("Size 6.5 GB.") is None


def test_it_names_the_complement_of_a_percentage_field() -> None:
    """100 − 61.5 = 38.5% free."""
    assert derivation("38.5% free.") == {"kind": "complement", "from": "100 − disk.used_pct"}


def test_it_names_a_column_sum_ratio_complement_and_difference() -> None:
    """Over all rows: sum 176, ratio 48.6% (176 of 362), its complement 51.4%, difference 186."""
    assert derivation("Used 176 TB.") == {"kind": "column-sum", "from": "Σ clusters[].used_tb"}
    assert derivation("Overall 48.6% used.") == {
        "kind": "column-ratio",
        "from": "100 × clusters[].used_tb ÷ clusters[].total_tb",
    }
    assert derivation("Overall 51.4% free.")["kind"] == "complement"
    assert derivation("Free: 186 TB.") == {
        "kind": "column-difference",
        "from": "clusters[].total_tb − clusters[].used_tb",
    }


def test_it_names_a_ratio_over_a_group_of_rows_that_share_a_value() -> None:
    """EU clusters: 166 of 312 TB, 53.2% (the example's figure), named by the group."""
    assert derivation("EU is 53.2% used.") == {
        "kind": "column-ratio",
        "from": "100 × clusters[region=eu].used_tb ÷ clusters[region=eu].total_tb",
    }


def test_it_accepts_no_product_average_or_chain() -> None:
    """An average (58.7), a product (24000) and a chained figure stay unsupported."""
    result = run("Average 58.7 TB, product 24000, chained 75.5%.", CLUSTERS)
    assert sorted(flagged(result)) == ["24000", "58.7", "75.5"]


def test_it_never_sums_numbers_scattered_in_free_text() -> None:
    """Sums are taken over the rows of a list, never over numbers in prose."""
    assert flagged(run("In all 3000 jobs.", "ran 1000 jobs, then 2000 jobs")) == ["3000"]


def test_it_derives_nothing_with_figures_off() -> None:
    """With figures off a computed four-digit number is simply unsupported."""
    result = run("Free: 1860 GB.", {"rows": [{"a_gb": 1000, "b_gb": 860}]}, {"evidence": {"figures": False}})
    assert flagged(result) == ["1860"]
    assert codes(result, "computed_value") == []


def test_decimal_rounding_accepts_only_a_single_carried_number_rounded() -> None:
    """With decimal_rounding, 3.14 from 3.14159 passes; 3.15 is flagged; a sum is not accepted."""
    options = {"evidence": {"decimal_rounding": True}}
    assert codes(run("Pi is 3.14.", {"pi": 3.14159}, options), "computed_value")
    assert flagged(run("Pi is 3.15.", {"pi": 3.14159}, options)) == ["3.15"]
    summed = run("Sum 3.5.", {"rows": [{"v": 1.5}, {"v": 2.0}]}, options)
    assert flagged(summed) == ["3.5"]


# --- time ---------------------------------------------------------------------------------


def test_it_reports_when_every_grounded_value_was_read_in_an_earlier_turn() -> None:
    """Turn 2 restates what turn 0 read: how many values, from which turn, how far back."""
    first = build_turn("fc1/3 is down.", calls=[{"tool": "show_ports", "result": PORTS}])
    second = build_turn("Anything else?")
    third = build_turn("Again: fc1/3 is down.", calls=[{"tool": "uptime", "result": {"up": True}}])
    (finding,) = codes(run_suite(build_conversation(first, second, third)), "prior_turn_evidence")
    assert finding["turn"] == 2
    assert finding["severity"] == "info"
    assert (finding["values"], finding["from_turn"], finding["turns_back"], finding["served_results"]) == (
        1,
        0,
        2,
        True,
    )


def test_it_is_quiet_when_this_turn_read_one_of_the_values() -> None:
    """A value re-read in this turn makes the turn current, whatever else came from before."""
    first = build_turn("fc1/3 is down.", calls=[{"tool": "show_ports", "result": PORTS}])
    second = build_turn("fc1/3 and fc1/1 again.", calls=[{"tool": "show_ports", "result": PORTS}])
    assert codes(run_suite(build_conversation(first, second)), "prior_turn_evidence") == []


def test_prior_turn_evidence_needs_a_grounded_value_and_the_option() -> None:
    """No grounded value, no finding; prior_turn off, no finding."""
    first = build_turn("fc1/3 is down.", calls=[{"tool": "show_ports", "result": PORTS}])
    second = build_turn("fc1/3 still.")
    options = {"evidence": {"prior_turn": False}}
    assert codes(run_suite(build_conversation(first, second), options), "prior_turn_evidence") == []
    assert codes(run_suite(build_conversation(first, build_turn("Nothing."))), "prior_turn_evidence") == []


# --- corrections --------------------------------------------------------------------------


def test_assist_proposes_no_correction() -> None:
    """The default posture records and flags only."""
    (finding,) = codes(run("FCID 0xef0101."), "unsupported_value")
    assert finding["correction"] is None


def test_guard_proposes_a_corrective_message_with_the_values_last() -> None:
    """The suite's words come first, "that was not collected" is allowed, the values close it."""
    (finding,) = codes(run("FCID 0xef0101.", options={"evidence": {"posture": "guard"}}), "unsupported_value")
    message = finding["correction"]
    assert message.startswith(CORRECTION_PREFIX)
    assert "that was not collected" in message
    assert message.endswith("`0xef0101`")


def test_rails_proposes_a_refusal_listing_at_most_twelve_values() -> None:
    """Fourteen invented values: twelve named, then "and 2 more"."""
    answer = " ".join(f"srv-{9000 + i}" for i in range(14))
    result = run(answer, {"x": 1}, {"evidence": {"posture": "rails"}})
    refusal = codes(result, "unsupported_value")[0]["correction"]
    assert refusal.startswith("This answer was not returned")
    assert "`srv-9011`, and 2 more" in refusal
    assert "srv-9012" not in refusal


def test_code_match_skips_a_fenced_program_the_turn_submitted() -> None:
    """Under code: match a fenced block equal to a submitted program is script, not claims,
    even where the run failed (so its arguments back nothing); by default its values are
    claims like any other, backed by a run that succeeded."""
    program = "x = 0xdeadbeef\nprint(x)"
    answer = f"I ran:\n```python\n{program}\n```\nIt printed 3735928559."
    failed = build_turn(
        answer,
        calls=[{"tool": "run_python", "args": {"code": program}, "result": "Error: sandbox unavailable"}],
    )
    assert flagged(run_suite(build_conversation(failed), {"evidence": {"code": "match"}})) == ["3735928559"]
    assert flagged(run_suite(build_conversation(failed))) == ["0xdeadbeef", "3735928559"]
    ran = build_turn(
        answer, calls=[{"tool": "run_python", "args": {"code": program}, "result": "3735928559"}]
    )
    assert flagged(run_suite(build_conversation(ran))) == []


# --- what it cannot see: written down so nobody mistakes it for a truth judge ------------


def test_blind_spot_a_false_claim_built_from_real_values_passes() -> None:
    """The data says fc1/3 is down; "fc1/3 is up" uses only grounded tokens and passes."""
    assert codes(run("fc1/3 is up."), "unsupported_value") == []


def test_blind_spot_a_real_value_about_the_wrong_subject_passes() -> None:
    """0x650000 belongs to fc1/1; saying it is fc1/3's FCID passes."""
    assert codes(run("The FCID of fc1/3 is 0x650000."), "unsupported_value") == []


def test_a_three_digit_invented_count_of_what_the_results_count_is_flagged() -> None:
    """The seed's blind spot, closed by amendment 1.1: the result lists ports, so "412 ports"
    is a count to check whatever its size; "412 links" counts nothing the results list."""
    assert flagged(run("The switch has 412 ports.")) == ["412"]
    assert codes(run("The switch has 412 links."), "unsupported_value") == []


def test_blind_spot_a_digit_free_invented_name_passes() -> None:
    """An invented name without a digit is a word, never a candidate."""
    assert codes(run("The device is stor-array-phantom."), "unsupported_value") == []


def test_it_bounds_a_catastrophic_shape_outside_the_main_thread_too() -> None:
    """In a worker thread (no timer signal) the pattern runs in a helper process that is stopped."""
    import threading

    options = {"evidence": {"shapes": [{"name": "evil", "pattern": "(a+)+b"}]}}
    answer = "Node " + "a" * 60 + " carries 0xef0101."
    out: dict[str, Any] = {}
    started = time.perf_counter()
    worker = threading.Thread(target=lambda: out.update(result=run(answer, {"x": 1}, options)))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert time.perf_counter() - started < 30
    assert flagged(out["result"]) == ["0xef0101"]


# --- quantities with units ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "grounded", "invented", "flagged"),
    [
        (
            {"parcel": "P-3", "weight_kg": 12, "route": "35 km"},
            "It weighs 12 kg over 35 km.",
            "It weighs 13 kg.",
            "13 kg",
        ),
        (
            {"trail": "Ridge", "length": "300 miles"},
            "The trail is 300 miles long.",
            "It is 40 cm wide.",
            "40 cm",
        ),
    ],
)
def test_a_distance_or_weight_no_source_holds_is_flagged(record, grounded, invented, flagged) -> None:
    """Distances and weights are figures with units, as durations and sizes are: a small
    one a source holds is grounded, one no source holds is flagged with its unit."""

    assert flagged_after(grounded, record) == []
    assert flagged_after(invented, record) == [flagged]


# --- the answer's own illustrations -----------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "illustration", "claim"),
    [
        # A parking garage: the rate, then what a stay of some length would cost.
        (
            {"garage": "G-4", "hourly": 4.5, "daily_cap": 30},
            "For example, a 3-hour stay would come to $13.50, and longer stays stop at the cap.",
            "Your 3-hour stay came to $13.50.",
        ),
        # A tutoring service: a package discount shown on a number of sessions nobody asked about.
        (
            {"plan": "T-10", "session_fee": 40, "package_discount_pct": 10},
            "A 12-session package, for instance, would be $432 instead of $480.",
            "Your 12-session package is $432 instead of $480.",
        ),
    ],
)
def test_a_figure_in_the_answers_own_example_is_no_claim(
    record: dict[str, Any], illustration: str, claim: str
) -> None:
    """ "For example", "for instance", "e.g.": the sentence illustrates how a rate works on a case
    the answer makes up, so its figures are not claims a result must hold; the same figures told
    as what happened are."""
    assert flagged_after(illustration, record) == []
    assert flagged_after(claim, record) != []
    # Told as a fact elsewhere in the answer too, the value is a claim there.
    assert flagged_after(f"{illustration} {claim}", record) != []
    # A report that says "for example" but nothing of what would be is one too.
    assert flagged_after(claim.replace("Your", "For example, your", 1), record) != []


# --- examples of a format -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("example", "claim", "flagged"),
    [
        (
            "Ticket numbers have the form TK-00000; yours is on the receipt.",
            "Your ticket is TK-48213.",
            "TK-48213",
        ),
        (
            "Enter the delivery date as YYYY-MM-DD, for example 2025-01-31.",
            "It arrives on 2025-01-31.",
            "2025-01-31",
        ),
        ("Bin labels use the format NNN-NNNN, e.g. ABC-1234.", "Your bin is ABC-1234.", "ABC-1234"),
        ("A pallet id looks like #P0000000.", "Pallet #P4410023 is ready.", "P4410023"),
    ],
)
def test_an_example_of_a_format_is_no_claim_but_the_same_value_stated_is(
    example: str, claim: str, flagged: str
) -> None:
    """A help desk's and a warehouse's formats: an example given for a format is neither
    flagged nor grounded; a value stated as a fact, outside a format's sentence, is flagged."""
    assert flagged_after(example, {"ok": True}) == []
    assert flagged_after(claim, {"ok": True}) == [flagged]
