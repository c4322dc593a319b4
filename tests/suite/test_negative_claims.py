"""The negative_claims checker: each row of the decision table, with a case and a near miss."""

from __future__ import annotations

import json
from typing import Any

import pytest
from suite_helpers import examples_dir

from checks.suite import parse, run_suite
from checks.suite.negative_claims import REFUSALS
from checks.suite.record import Record

WWPN = "20:00:00:25:b5:aa:00:1f"


def call(call_id: str, tool: str, result: Any, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": call_id, "tool": tool, "result": result, "args": args or {}}


def turn(
    answer: str,
    *batches: list[dict[str, Any]],
    receipts: list[dict[str, Any]] | None = None,
    negative: list[Any] | None = None,
    user: str = "Any logins for mkeller?",
) -> dict[str, Any]:
    """One turn; each batch is the calls one assistant message asked for, then their results."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for batch in batches:
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["tool"], "arguments": json.dumps(c["args"])},
                    }
                    for c in batch
                ],
            }
        )
        for c in batch:
            result = c["result"]
            content = result if isinstance(result, str) else json.dumps(result)
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
    messages.append({"role": "assistant", "content": answer})
    out: dict[str, Any] = {"messages": messages}
    if receipts is not None:
        out["receipts"] = receipts
    if negative is not None:
        out["negative_claims"] = negative
    return out


def conversation(*turns: dict[str, Any], complete: bool = True) -> dict[str, Any]:
    return {"external_id": "neg-1", "receipts_complete": complete, "turns": list(turns)}


def read(call_id: str = "call-1", handle: str = "r1", **fields: Any) -> dict[str, Any]:
    """A runtime read of find_logins for mkeller that declared the absence over a complete search."""
    receipt: dict[str, Any] = {
        "call_id": call_id,
        "tool": "find_logins",
        "ok": True,
        "effect": "read",
        "result_count": 0,
        "emptiness": "declared-absent",
        "handle": handle,
        "scope": {"filters": {"user": "mkeller"}, "complete": True},
    }
    receipt.update(fields)
    return {k: v for k, v in receipt.items() if v is not None}


ABSENT = {"absent": True}
CLAIM = {"kind": "none", "about": "mkeller", "restsOn": ["r1"]}
ANSWER = "Here is what I know."  # no prose absence: only the typed claims are judged


def one_search(*, receipt: dict[str, Any] | None = None, negative: list[Any] | None = None, **kw: Any):
    return turn(
        ANSWER,
        [call("call-1", "find_logins", ABSENT, {"user": "mkeller"})],
        receipts=[receipt or read()],
        negative=[CLAIM] if negative is None else negative,
        **kw,
    )


def mine(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] == "negative_claims"]


def codes(result: dict[str, Any]) -> list[str]:
    return [f["code"] for f in mine(result)]


def judged(*turns: dict[str, Any], complete: bool = True, options: Any = None) -> list[str]:
    return codes(run_suite(conversation(*turns, complete=complete), options))


# --- established ------------------------------------------------------------------------------


def test_a_declared_absence_over_a_complete_search_is_established() -> None:
    """The plain case: the cited read declared the absence of what the claim is about."""
    (finding,) = mine(run_suite(conversation(one_search())))
    assert (finding["code"], finding["severity"], finding["disposition"]) == (
        "established",
        "info",
        "checked-pass",
    )
    assert finding["correction"] is None
    assert (finding["index"], finding["kind"], finding["about"], finding["restsOn"]) == (
        0,
        "none",
        "mkeller",
        ["r1"],
    )
    assert finding["cited"] == ["r1"] and finding["contrary"] == []
    assert finding["evidence"] == [
        {"call_id": "call-1", "path": "", "start": 0, "end": len('{"absent": true}')}
    ]
    assert finding["claim"] is None  # a typed claim has no place in the answer
    assert "mkeller" in finding["statement"]


def test_none_and_not_found_are_the_same_finding() -> None:
    negative = [{"kind": "not-found", "about": "mkeller", "restsOn": ["r1"]}]
    assert judged(one_search(negative=negative)) == ["established"]


# --- row 1: too_many_claims ----------------------------------------------------------------------


def test_more_than_sixteen_claims_refuses_every_one() -> None:
    result = run_suite(conversation(one_search(negative=[CLAIM] * 17)))
    assert codes(result) == ["too_many_claims"] * 17
    assert {f["correction"] for f in mine(result)} == {REFUSALS["too_many_claims"]}


def test_sixteen_claims_are_judged_one_by_one() -> None:
    assert judged(one_search(negative=[CLAIM] * 16)) == ["established"] * 16


# --- row 2: citation_unresolved ------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        "r1",
        ["r1"],
        None,
        {"kind": "none", "restsOn": ["r1"], "why": "because"},
        {"kind": "none", "about": "  ", "restsOn": ["r1"]},
        {"kind": "none", "about": "x" * 257, "restsOn": ["r1"]},
        {"kind": "none", "about": None, "restsOn": ["r1"]},
        {"kind": "none", "about": {"user": "mkeller"}, "restsOn": ["r1"]},
        {"kind": "none", "restsOn": []},
        {"kind": "none"},
        {"kind": "none", "restsOn": "r1"},
        {"kind": "none", "restsOn": ["r1"] * 17},
        {"kind": "none", "restsOn": ["R1"]},
        {"kind": "none", "restsOn": ["r0"]},
        {"kind": "none", "restsOn": ["r10000"]},
        {"kind": "none", "restsOn": [1]},
        {"kind": "none", "restsOn": ["r9"]},
    ],
)
def test_a_malformed_or_unknown_citation_is_unresolved(entry: Any) -> None:
    """Stored as sent and judged: never an ingestion error."""
    result = run_suite(conversation(one_search(negative=[entry])))
    (finding,) = mine(result)
    assert (finding["code"], finding["severity"]) == ("citation_unresolved", "flag")
    assert finding["correction"] == REFUSALS["citation_unresolved"]
    assert finding["evidence"] == []


def test_a_non_object_entry_is_shown_as_sent() -> None:
    (finding,) = mine(run_suite(conversation(one_search(negative=["r1"]))))
    assert finding["entry"] == "r1" and finding["kind"] is None


@pytest.mark.parametrize(
    "entry",
    [
        {"kind": "none", "restsOn": ["r1"]},  # about is optional
        {"kind": "none", "about": "mkeller", "restsOn": ["r1"] * 16},  # sixteen handles, one read
        {"kind": "none", "about": "mkeller", "restsOn": ["r1", "r1"]},  # a repeated handle
    ],
)
def test_a_well_formed_citation_resolves(entry: dict[str, Any]) -> None:
    assert judged(one_search(negative=[entry])) == ["established"]


def test_a_number_about_resolves_and_compares_with_the_filter() -> None:
    receipt = read(scope={"filters": {"account": "7781"}, "complete": True})
    assert judged(
        one_search(receipt=receipt, negative=[{"kind": "none", "about": 7781, "restsOn": ["r1"]}])
    ) == ["established"]


def test_a_handle_of_a_later_turn_names_no_receipt_yet() -> None:
    first = turn(ANSWER, negative=[CLAIM])
    second = one_search(negative=[])
    assert judged(first, second) == ["citation_unresolved"]


# --- row 3: kind_mismatch ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["nothing", None, "None", 3])
def test_an_unknown_kind_is_a_mismatch(kind: Any) -> None:
    entry = {"about": "mkeller", "restsOn": ["r1"]} if kind is None else {**CLAIM, "kind": kind}
    assert judged(one_search(negative=[entry])) == ["kind_mismatch"]


def test_a_known_kind_is_no_mismatch() -> None:
    assert judged(one_search(negative=[{**CLAIM, "kind": "not-found"}])) == ["established"]


# --- row 4: record_incomplete --------------------------------------------------------------------


def test_a_trimmed_record_cannot_establish_an_absence() -> None:
    assert judged(one_search(), complete=False) == ["record_incomplete"]
    assert judged(one_search(), complete=True) == ["established"]


# --- row 5: outside_trusted_context ---------------------------------------------------------------


def test_a_read_outside_the_trusted_context_is_refused() -> None:
    assert judged(one_search(receipt=read(trusted=False))) == ["outside_trusted_context"]
    assert judged(one_search(receipt=read(trusted=True))) == ["established"]


# --- row 6: cited_call_undeclared -----------------------------------------------------------------


def test_a_tool_not_named_as_citable_is_undeclared() -> None:
    options = {"negative_claims": {"tools": ["find_accounts"]}}
    assert judged(one_search(), options=options) == ["cited_call_undeclared"]
    options = {"negative_claims": {"tools": ["find_logins"]}}
    assert judged(one_search(), options=options) == ["established"]


def test_by_default_a_tool_with_no_read_receipt_is_undeclared() -> None:
    """Citing a write of a tool that never read: not among the tools whose reads may be cited."""
    data = turn(
        ANSWER,
        [call("call-1", "create_login", {"ok": True})],
        receipts=[
            {"call_id": "call-1", "tool": "create_login", "ok": True, "effect": "write", "handle": "r1"}
        ],
        negative=[{"kind": "none", "restsOn": ["r1"]}],
    )
    assert judged(data) == ["cited_call_undeclared"]


# --- row 7: call_not_read ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"dispatched": False},
        {"ok": False, "outcome": "error"},
        {"ok": None, "outcome": "denied"},
        {"effect": "unknown"},
    ],
)
def test_a_cited_call_that_is_not_a_completed_read_is_refused(fields: dict[str, Any]) -> None:
    options = {"negative_claims": {"tools": ["find_logins"]}}
    assert judged(one_search(receipt=read(**fields)), options=options) == ["call_not_read"]


def test_a_write_of_a_tool_that_also_reads_is_not_a_read() -> None:
    """The tool may be cited (it has a read receipt); this call of it was not a read."""
    data = turn(
        ANSWER,
        [call("call-1", "find_logins", ABSENT, {"user": "mkeller"})],
        [call("call-2", "find_logins", {"ok": True}, {"user": "mkeller"})],
        receipts=[read(), read("call-2", "r2", effect="write")],
        negative=[{**CLAIM, "restsOn": ["r2"]}],
    )
    assert judged(data) == ["call_not_read"]


# --- row 8: stale_turn -----------------------------------------------------------------------------


def test_a_read_of_an_earlier_turn_is_stale_and_the_refusal_names_when() -> None:
    first = one_search(receipt=read(at="2026-11-30T10:00:00+01:00"), negative=[])
    second = turn(ANSWER, negative=[CLAIM], user="And now?")
    (finding,) = mine(run_suite(conversation(first, second)))
    assert (finding["turn"], finding["code"]) == (1, "stale_turn")
    assert finding["correction"] == (
        "I don't know. The cited result was read on turn 0 at 2026-11-30T09:00:00Z; "
        "it was not read again during this turn."
    )
    assert finding["stale"] == {"turn": 0, "at": "2026-11-30T10:00:00+01:00", "handle": "r1"}


def test_a_stale_read_with_no_time_names_the_turn_alone() -> None:
    first = one_search(negative=[])
    second = turn(ANSWER, negative=[CLAIM], user="And now?")
    (finding,) = mine(run_suite(conversation(first, second)))
    assert finding["correction"].startswith("I don't know. The cited result was read on turn 0;")


def test_a_read_repeated_this_turn_keeps_an_earlier_citation_fresh() -> None:
    first = one_search(negative=[])
    again = turn(
        ANSWER,
        [call("call-2", "find_logins", ABSENT, {"user": "mkeller"})],
        receipts=[read("call-2", "r2")],
        negative=[CLAIM],
        user="And now?",
    )
    assert judged(first, again) == ["established"]


def test_a_repeat_with_other_filters_does_not_refresh_it() -> None:
    first = one_search(negative=[])
    other = turn(
        ANSWER,
        [call("call-2", "find_logins", ABSENT, {"user": "jdoe"})],
        receipts=[read("call-2", "r2", scope={"filters": {"user": "jdoe"}, "complete": True})],
        negative=[CLAIM],
        user="And now?",
    )
    assert judged(first, other) == ["stale_turn"]


# --- row 9: contradicted_by_rows ------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"result_count": 2, "emptiness": "non-empty"},
        {"result_count": 1},
        {"result_count": None, "emptiness": "non-empty"},
    ],
)
def test_a_cited_read_with_rows_contradicts_the_claim(fields: dict[str, Any]) -> None:
    (finding,) = mine(run_suite(conversation(one_search(receipt=read(**fields)))))
    assert (finding["code"], finding["disposition"]) == ("contradicted_by_rows", "checked-fail")


def test_zero_rows_do_not_contradict_it() -> None:
    assert judged(one_search(receipt=read(result_count=0))) == ["established"]


# --- row 10: coverage_unverified ------------------------------------------------------------------


def test_a_read_with_no_recorded_scope_leaves_coverage_unverified() -> None:
    receipt = read()
    del receipt["scope"]
    assert judged(one_search(receipt=receipt)) == ["coverage_unverified"]


def test_a_scope_with_no_filters_is_still_a_recorded_scope() -> None:
    negative = [{"kind": "none", "restsOn": ["r1"]}]
    assert judged(one_search(receipt=read(scope={"complete": True}), negative=negative)) == ["established"]


# --- row 11: undeclared_empty ----------------------------------------------------------------------


def test_an_empty_list_without_declaration_or_complete_search_is_undeclared() -> None:
    scope = {"filters": {"user": "mkeller"}, "complete": False}
    assert judged(one_search(receipt=read(emptiness="empty", scope=scope))) == ["undeclared_empty"]


def test_an_empty_list_over_a_complete_search_is_enough() -> None:
    assert judged(one_search(receipt=read(emptiness="empty"))) == ["established"]


# --- row 12: superseded_by_write ------------------------------------------------------------------


def _with_write(batches: list[list[dict[str, Any]]], receipts: list[dict[str, Any]]) -> dict[str, Any]:
    return turn(ANSWER, *batches, receipts=receipts, negative=[CLAIM])


WRITE = {"call_id": "call-2", "tool": "create_login", "ok": True, "effect": "write", "handle": "r2"}
FIND = call("call-1", "find_logins", ABSENT, {"user": "mkeller"})
CREATE = call("call-2", "create_login", {"ok": True}, {"user": "mkeller"})


def test_a_write_after_the_read_supersedes_it() -> None:
    result = run_suite(conversation(_with_write([[FIND], [CREATE]], [read(), WRITE])))
    (finding,) = mine(result)
    assert finding["code"] == "superseded_by_write"
    assert finding["superseded_by"] == ["r2"]
    assert [e["call_id"] for e in finding["evidence"]] == ["call-1", "call-2"]


def test_a_write_in_the_same_batch_supersedes_it_even_when_listed_first() -> None:
    assert judged(_with_write([[CREATE, FIND]], [WRITE, read()])) == ["superseded_by_write"]


def test_a_call_of_unknown_effect_may_change_the_data_too() -> None:
    assert judged(_with_write([[FIND], [CREATE]], [read(), {**WRITE, "effect": "unknown"}])) == [
        "superseded_by_write"
    ]


def test_a_write_before_the_read_does_not_supersede_it() -> None:
    assert judged(_with_write([[CREATE], [FIND]], [WRITE, read()])) == ["established"]


def test_a_write_that_was_never_dispatched_does_not_supersede_it() -> None:
    assert judged(_with_write([[FIND], [CREATE]], [read(), {**WRITE, "dispatched": False}])) == [
        "established"
    ]


# --- row 13: later_read_failed ---------------------------------------------------------------------


def test_a_later_failed_repeat_of_the_search_unsettles_it() -> None:
    retry = call("call-2", "find_logins", {"error": "timeout"}, {"user": "mkeller"})
    data = turn(
        ANSWER,
        [FIND],
        [retry],
        receipts=[read(), read("call-2", "r2", ok=False, outcome="error")],
        negative=[CLAIM],
    )
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["contrary"]) == ("later_read_failed", ["r2"])


def test_an_earlier_failed_attempt_does_not() -> None:
    retry = call("call-2", "find_logins", {"error": "timeout"}, {"user": "mkeller"})
    data = turn(
        ANSWER,
        [retry],
        [FIND],
        receipts=[read("call-2", "r2", ok=False, outcome="error"), read()],
        negative=[CLAIM],
    )
    assert judged(data) == ["established"]


# --- rows 14 and 15: other reads with rows ------------------------------------------------------------


def _two_reads(other: dict[str, Any], result: Any) -> dict[str, Any]:
    return turn(
        ANSWER,
        [FIND],
        [call("call-2", "find_logins", result)],
        receipts=[read(), read("call-2", "r2", **other)],
        negative=[CLAIM],
    )


ROWS = [{"user": "mkeller", "at": "2026-11-29T23:12:09Z"}]


def test_a_wider_search_with_rows_unsettles_it() -> None:
    other = {"result_count": 1, "emptiness": "non-empty", "scope": {"filters": {}, "complete": True}}
    (finding,) = mine(run_suite(conversation(_two_reads(other, ROWS))))
    assert (finding["code"], finding["cited"], finding["contrary"]) == (
        "wider_search_has_rows",
        ["r1"],
        ["r2"],
    )
    assert [e["call_id"] for e in finding["evidence"]] == ["call-1", "call-2"]


def test_a_search_of_another_subject_with_rows_is_not_wider() -> None:
    other = {
        "result_count": 1,
        "emptiness": "non-empty",
        "scope": {"filters": {"user": "jdoe"}, "complete": True},
    }
    assert judged(_two_reads(other, [{"user": "jdoe"}])) == ["established"]


def test_an_untrusted_wider_search_does_not_count() -> None:
    other = {"result_count": 1, "emptiness": "non-empty", "scope": {"filters": {}}, "trusted": False}
    assert judged(_two_reads(other, ROWS)) == ["established"]


def test_another_read_of_the_same_subject_with_rows_joins_the_evidence() -> None:
    other = {"result_count": 1, "emptiness": "non-empty"}
    (finding,) = mine(run_suite(conversation(_two_reads(other, ROWS))))
    assert (finding["code"], finding["disposition"], finding["contrary"]) == (
        "other_read_has_rows",
        "checked-fail",
        ["r2"],
    )
    assert finding["correction"] == REFUSALS["other_read_has_rows"]
    assert [e["call_id"] for e in finding["evidence"]] == ["call-1", "call-2"]


def test_rows_shown_to_lie_outside_the_claim_do_not_count() -> None:
    other = {"result_count": 2, "emptiness": "non-empty"}
    rows = [{"user": "mkeller2"}, {"user": "MKELLERS"}]
    assert judged(_two_reads(other, rows)) == ["established"]


@pytest.mark.parametrize(
    ("count", "rows"),
    [
        (2, [{"user": "jdoe"}, {"name": "x"}]),  # one row lacks the field
        (3, [{"user": "jdoe"}, {"user": "kim"}]),  # not every row was read
        (2, [{"user": "jdoe"}, {"user": "MKeller"}]),  # one row is the subject itself
        (1, "3 logins"),  # rows of unknown shape
    ],
)
def test_rows_not_all_shown_outside_still_count(count: int, rows: Any) -> None:
    other = {"result_count": count, "emptiness": "non-empty"}
    assert judged(_two_reads(other, rows)) == ["other_read_has_rows"]


# --- row 16: search_incomplete ----------------------------------------------------------------------


def test_a_complete_claim_over_a_partial_search_reports_the_narrower_absence() -> None:
    scope = {"filters": {"user": "mkeller"}, "complete": False}
    entry = {"kind": "complete", "about": "mkeller", "restsOn": ["r1"]}
    (finding,) = mine(run_suite(conversation(one_search(receipt=read(scope=scope), negative=[entry]))))
    assert finding["code"] == "search_incomplete"
    assert finding["correction"].startswith(
        "The requested complete-list claim is not established; only this absence is. Recorded:"
    )
    assert finding["narrower"]["kind"] == "none"


def test_no_narrower_absence_when_the_absence_itself_fails() -> None:
    """Declared absent, but about something the search did not look for: no narrower claim either."""
    scope = {"filters": {"user": "mkeller"}, "complete": False}
    entry = {"kind": "complete", "about": "someone-else", "restsOn": ["r1"]}
    (finding,) = mine(run_suite(conversation(one_search(receipt=read(scope=scope), negative=[entry]))))
    assert finding["code"] == "search_incomplete"
    assert finding["correction"] == REFUSALS["search_incomplete"]
    assert "narrower" not in finding


def test_an_absence_neither_declared_nor_searched_completely_is_incomplete() -> None:
    receipt = read(emptiness="unknown", scope={"filters": {"user": "mkeller"}, "complete": False})
    assert judged(one_search(receipt=receipt)) == ["search_incomplete"]


def test_a_complete_claim_over_a_complete_search_holds() -> None:
    entry = {"kind": "complete", "about": "mkeller", "restsOn": ["r1"]}
    assert judged(one_search(negative=[entry])) == ["established"]


# --- row 17: about_mismatch -----------------------------------------------------------------------


def test_a_claim_about_something_the_search_did_not_look_for_mismatches() -> None:
    (finding,) = mine(run_suite(conversation(one_search(negative=[{**CLAIM, "about": "jdoe"}]))))
    assert (finding["code"], finding["about"]) == ("about_mismatch", "jdoe")
    assert "jdoe" not in finding["correction"]  # the refusal never borrows the model's words


def test_about_compares_without_case() -> None:
    assert judged(one_search(negative=[{**CLAIM, "about": "MKeller"}])) == ["established"]


# --- row 18: evidence_kind_undetermined ---------------------------------------------------------------


def test_reads_that_establish_different_kinds_leave_the_kind_undetermined() -> None:
    absent = read(scope={"filters": {"user": "mkeller"}, "complete": False})
    listed = read("call-2", "r2", emptiness="unknown")
    data = turn(
        ANSWER,
        [FIND, call("call-2", "find_logins", ABSENT, {"user": "mkeller"})],
        receipts=[absent, listed],
        negative=[{**CLAIM, "restsOn": ["r1", "r2"]}],
    )
    assert judged(data) == ["evidence_kind_undetermined"]


def test_reads_that_establish_the_same_kind_agree() -> None:
    data = turn(
        ANSWER,
        [FIND, call("call-2", "find_logins", ABSENT, {"user": "mkeller"})],
        receipts=[read(), read("call-2", "r2")],
        negative=[{**CLAIM, "restsOn": ["r1", "r2"]}],
    )
    assert judged(data) == ["established"]


# --- the order of the table -------------------------------------------------------------------------


def test_the_first_row_that_applies_wins() -> None:
    """Untrusted and contradicted by rows: row 5 comes before row 9."""
    receipt = read(trusted=False, result_count=3, emptiness="non-empty")
    assert judged(one_search(receipt=receipt)) == ["outside_trusted_context"]


def test_every_refusal_is_an_i_dont_know_sentence() -> None:
    assert all(sentence.startswith("I don't know") for sentence in REFUSALS.values())


# --- prose absences ---------------------------------------------------------------------------------


def test_a_prose_absence_restating_a_typed_claim_is_that_claim() -> None:
    data = turn(
        "No logins were recorded for mkeller.",
        [FIND],
        receipts=[read()],
        negative=[CLAIM],
    )
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["source"], finding["index"]) == ("established", "typed", 0)
    assert finding["claim"] == {"text": "No logins were recorded", "start": 0, "end": 23}


@pytest.mark.parametrize(
    "entry",
    [
        {"kind": "none", "about": "mkeller", "restsOn": ["r1"], "reason": "asked"},  # a key too many
        {"kind": "none", "about": "mkeller", "restsOn": ["r7"]},  # a handle that names nothing
        {"kind": "none", "about": "mkeller", "restsOn": "r1"},  # a handle not in a list
        "no logins",  # not an object at all
    ],
)
def test_a_prose_absence_restating_a_malformed_typed_claim_is_that_claim(entry: Any) -> None:
    """The sentence says what the broken entry says: one red finding on the sentence, not a
    green one for the sentence beside the red one for the entry."""
    data = turn("No logins were recorded for mkeller.", [FIND], receipts=[read()], negative=[entry])
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["source"], finding["index"]) == ("citation_unresolved", "typed", 0)
    assert finding["claim"] == {"text": "No logins were recorded", "start": 0, "end": 23}


def test_a_prose_absence_restating_a_claim_of_an_unknown_kind_is_that_claim() -> None:
    """The entry cites the read the sentence rests on; its kind is wrong, the sentence is its."""
    entry = {"kind": "nothing-at-all", "restsOn": ["r1"]}
    data = turn("No logins were recorded for that user.", [FIND], receipts=[read()], negative=[entry])
    assert [(f["code"], f["source"]) for f in mine(run_suite(conversation(data)))] == [
        ("kind_mismatch", "typed")
    ]


def test_a_prose_absence_about_another_subject_is_judged_on_its_own() -> None:
    """The malformed entry is about jdoe and points at no read; the sentence is about mkeller's
    logins over a sound read, so each gets its own finding."""
    entry = {"kind": "none", "about": "jdoe", "restsOn": ["r9"]}
    data = turn("No logins were recorded for mkeller.", [FIND], receipts=[read()], negative=[entry])
    found = sorted((f["code"], f["source"]) for f in mine(run_suite(conversation(data))))
    assert found == [("citation_unresolved", "typed"), ("established", "prose")]


def test_a_subject_named_in_the_sentence_before_ties_the_absence_to_its_claim() -> None:
    """ "I checked mkeller. Nothing turned up…": the subject stands one sentence earlier."""
    entry = {"kind": "none", "about": "mkeller", "restsOn": ["r5"]}
    data = turn(
        "I checked the sign-ins of mkeller. No logins were recorded.",
        [FIND],
        receipts=[read()],
        negative=[entry],
    )
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["claim"]["text"]) == ("citation_unresolved", "No logins were recorded")


def test_a_prose_absence_over_a_runtime_read_is_judged_by_the_table() -> None:
    receipt = read()
    del receipt["scope"]
    data = turn("No logins were found for mkeller.", [FIND], receipts=[receipt])
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["source"], finding["cited"]) == ("coverage_unverified", "prose", ["r1"])
    assert finding["claim"]["text"] == "No logins were found"


def test_a_prose_absence_over_a_sound_runtime_read_is_established() -> None:
    data = turn("There are no logins for mkeller.", [FIND], receipts=[read()])
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["source"], finding["index"]) == ("established", "prose", None)


def test_a_prose_absence_known_only_from_the_transcript_is_unverified() -> None:
    data = turn("That machine has no backup record.", [call("call-1", "backup_status", ABSENT)])
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["severity"], finding["missing"]) == (
        "absence_unverified",
        "info",
        "runtime_receipt",
    )
    assert finding["claim"]["text"] == "That machine has no backup record"


def test_a_prose_absence_over_a_receipt_that_is_not_a_read_is_unverified() -> None:
    receipt = {"call_id": "call-1", "tool": "find_logins", "ok": True, "result_count": 0}
    data = turn("No logins were found.", [FIND], receipts=[receipt])
    (finding,) = mine(run_suite(conversation(data)))
    assert (finding["code"], finding["missing"]) == ("absence_unverified", "read_effect")


def test_an_absence_the_receipts_contradict_is_left_to_false_absence() -> None:
    """One defect, one finding: tool_receipts reports it, this checker does not."""
    data = turn("No logins were found.", [call("call-1", "find_logins", ROWS * 2)])
    result = run_suite(conversation(data))
    assert codes(result) == []
    assert [f["code"] for f in result["findings"] if f["severity"] == "flag"] == ["false_absence"]


def test_sentences_that_are_not_absences_are_not_read() -> None:
    data = turn("I have no way to check that; there is no need to worry.", [FIND], receipts=[read()])
    assert judged(data) == []


# --- the turn summary ------------------------------------------------------------------------------------


def _summary(result: dict[str, Any], index: int = 0) -> dict[str, Any] | None:
    return result["turns"][index].get("negative_claims")


def test_all_established_goes_out_as_checked() -> None:
    summary = _summary(run_suite(conversation(one_search())))
    assert summary == {
        "claims": 1,
        "prose": 0,
        "established": 1,
        "failed": 0,
        "unreachable": 0,
        "status": "passed",
        "delivery": "as-checked",
    }


def test_a_failed_check_fails_the_turn_and_falls_back() -> None:
    result = run_suite(conversation(one_search(negative=[CLAIM, {**CLAIM, "about": "jdoe"}])))
    summary = _summary(result)
    assert (summary["status"], summary["delivery"], summary["failed"]) == ("failed", "fallback", 1)


def test_an_unreachable_check_leaves_the_turn_unverified() -> None:
    summary = _summary(run_suite(conversation(one_search(receipt=read(trusted=False)))))
    assert (summary["status"], summary["unreachable"]) == ("unverified", 1)


def test_state_searched_delivers_what_the_record_says() -> None:
    options = {"negative_claims": {"unestablished": "state-searched"}}
    summary = _summary(run_suite(conversation(one_search(receipt=read(trusted=False))), options))
    assert summary["delivery"] == "recorded"


def test_a_turn_with_only_prose_absences_has_no_delivery() -> None:
    data = turn("There are no logins for mkeller.", [FIND], receipts=[read()])
    summary = _summary(run_suite(conversation(data)))
    assert (summary["claims"], summary["prose"], summary["delivery"]) == (0, 1, None)


def test_a_turn_without_negatives_has_no_summary() -> None:
    data = turn("Here you go.", [FIND], receipts=[read()], negative=[])
    assert _summary(run_suite(conversation(data))) is None


# --- the record ---------------------------------------------------------------------------------------------


def test_the_record_lists_every_call_with_its_facts() -> None:
    data = conversation(
        turn(
            ANSWER,
            [FIND, CREATE],
            receipts=[read(at="2026-11-30T10:00:00Z"), WRITE],
        ),
        turn("Done.", [call("call-3", "find_logins", ROWS)], user="Again?"),
    )
    record = Record.of(parse(data))
    first, write, derived = (c.to_dict() for c in record.calls)
    assert first == {
        "handle": "r1",
        "call_id": "call-1",
        "turn": 0,
        "tool": "find_logins",
        "effect": "read",
        "dispatched": True,
        "trusted": True,
        "outcome": "ok",
        "scope": {"filters": {"user": "mkeller"}, "complete": True},
        "emptiness": "declared-absent",
        "result_count": 0,
        "rows": None,
        "at": "2026-11-30T10:00:00Z",
        "derived": False,
    }
    assert (write["effect"], write["scope"], write["emptiness"]) == ("write", None, "unknown")
    assert (derived["handle"], derived["turn"], derived["rows"], derived["emptiness"], derived["effect"]) == (
        "r3",
        1,
        ROWS,
        "non-empty",
        "unknown",
    )


# --- the examples and purity -------------------------------------------------------------------


def _example(name: str) -> dict[str, Any]:
    (path,) = examples_dir().glob(f"{name}_*.json")
    return json.loads(path.read_text())


def test_example_11_is_established() -> None:
    result = run_suite(_example("11"))
    assert [(f["code"], f["severity"]) for f in mine(result)] == [("established", "info")]
    assert [f for f in result["findings"] if f["severity"] == "flag"] == []


def test_example_12_is_superseded_by_the_write() -> None:
    result = run_suite(_example("12"))
    assert [(f["code"], f["severity"]) for f in result["findings"] if f["severity"] == "flag"] == [
        ("superseded_by_write", "flag")
    ]


@pytest.mark.parametrize("name", ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "13", "14"])
def test_the_other_examples_gain_no_flag_from_this_checker(name: str) -> None:
    assert [f for f in mine(run_suite(_example(name))) if f["severity"] == "flag"] == []


def test_the_same_conversation_gives_the_same_findings() -> None:
    data = conversation(_two_reads({"result_count": 1, "emptiness": "non-empty"}, ROWS))
    assert run_suite(data) == run_suite(data)
