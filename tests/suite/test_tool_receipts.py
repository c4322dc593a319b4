"""The tool_receipts checker: invoked, count and absence claims against the runtime's receipts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.suite import run_suite


def receipt_findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] == "tool_receipts"]


def codes(result: dict[str, Any]) -> list[str]:
    return [f["code"] for f in receipt_findings(result)]


def rows(n: int) -> list[dict[str, int]]:
    return [{"id": i} for i in range(n)]


def structured(conversation, turn, claims, receipts, *, complete: bool = True, calls=None) -> dict[str, Any]:
    """A turn whose claims and receipts are given by the runtime."""
    data = conversation(
        turn("The answer.", calls=calls, receipts=receipts, claims=claims, offered=["search"]),
        complete=complete,
    )
    return run_suite(data)


SEARCH_3 = {"call_id": "call-1", "tool": "search", "ok": True, "result_count": 3}


# --- structured claims ----------------------------------------------------------------------


def test_it_grounds_an_invoked_claim_that_has_a_receipt(conversation, turn) -> None:
    """The tool really ran, so saying so is fine."""
    assert codes(structured(conversation, turn, [{"kind": "invoked", "tool": "search"}], [SEARCH_3])) == []


def test_it_flags_a_tool_with_no_receipt_as_fabricated(conversation, turn) -> None:
    """No receipt and a complete record: the call never happened."""
    result = structured(conversation, turn, [{"kind": "invoked", "tool": "search"}], [])
    (finding,) = receipt_findings(result)
    assert (finding["code"], finding["severity"], finding["tool"]) == (
        "fabricated_tool_reference",
        "flag",
        "search",
    )
    assert finding["correction"].startswith("Note from Receipts:")


def test_it_flags_a_misstated_count_with_both_numbers(conversation, turn) -> None:
    """12 claimed against 3 recorded; the note gives the recorded number."""
    claims = [{"kind": "count", "tool": "search", "count": 12}]
    (finding,) = receipt_findings(structured(conversation, turn, claims, [SEARCH_3]))
    assert finding["code"] == "count_misstatement"
    assert (finding["claimed"], finding["recorded"]) == (12, 3)
    assert finding["correction"] == "Note from Receipts: the search tool returned 3 results, not 12."


def test_it_grounds_a_correct_count(conversation, turn) -> None:
    """The same number as the receipt is no finding."""
    claims = [{"kind": "count", "tool": "search", "count": 3}]
    assert codes(structured(conversation, turn, claims, [SEARCH_3])) == []


def test_it_flags_an_absence_the_receipt_contradicts(conversation, turn) -> None:
    """ "Nothing found" over five recorded results is a false absence."""
    receipts = [{**SEARCH_3, "result_count": 5}]
    assert codes(structured(conversation, turn, [{"kind": "absence", "tool": "search"}], receipts)) == [
        "false_absence"
    ]


def test_it_grounds_a_true_absence(conversation, turn) -> None:
    """Zero recorded results bear the absence out."""
    receipts = [{**SEARCH_3, "result_count": 0}]
    assert codes(structured(conversation, turn, [{"kind": "absence", "tool": "search"}], receipts)) == []


def test_it_reads_non_empty_emptiness_as_results_when_no_count_was_kept(conversation, turn) -> None:
    """A receipt may say its result was non-empty without counting it; that still refutes an absence."""
    receipts = [
        {"call_id": "call-1", "tool": "search", "ok": True, "result_count": None, "emptiness": "non-empty"}
    ]
    assert codes(structured(conversation, turn, [{"kind": "absence", "tool": "search"}], receipts)) == [
        "false_absence"
    ]


def test_it_cannot_refute_a_count_the_receipt_did_not_record(conversation, turn) -> None:
    """No recorded count, no contradiction."""
    claims = [{"kind": "count", "tool": "search", "count": 9}]
    receipts = [{**SEARCH_3, "result_count": None}]
    assert codes(structured(conversation, turn, claims, receipts)) == []


def test_it_treats_a_named_call_with_no_receipt_as_fabricated(conversation, turn) -> None:
    """Naming call-2 when only call-1 ran is a reference to a call that did not happen."""
    claims = [{"kind": "invoked", "tool": "search", "call_id": "call-2"}]
    (finding,) = receipt_findings(structured(conversation, turn, claims, [SEARCH_3]))
    assert finding["code"] == "fabricated_tool_reference"
    assert "call-2" in finding["explanation"]


def test_it_binds_a_named_call_to_its_own_receipt(conversation, turn) -> None:
    """call-2's count is judged against call-2's receipt, not the first search's."""
    claims = [{"kind": "count", "tool": "search", "call_id": "call-2", "count": 2}]
    receipts = [
        {**SEARCH_3, "result_count": 99},
        {"call_id": "call-2", "tool": "search", "ok": True, "result_count": 2},
    ]
    assert codes(structured(conversation, turn, claims, receipts)) == []


def test_it_calls_a_claim_ungroundable_when_receipts_may_have_been_trimmed(conversation, turn) -> None:
    """Retention forgetting a receipt is no evidence of fabrication: info, not flag."""
    result = structured(conversation, turn, [{"kind": "invoked", "tool": "search"}], [], complete=False)
    (finding,) = receipt_findings(result)
    assert (finding["code"], finding["severity"]) == ("ungroundable", "info")
    assert "trimmed" in finding["explanation"]
    assert not [f for f in result["findings"] if f["severity"] == "flag"]


def test_it_still_flags_a_wrong_count_against_a_kept_receipt_in_a_trimmed_window(conversation, turn) -> None:
    """A receipt that was kept is ground truth whatever else was trimmed."""
    claims = [{"kind": "count", "tool": "search", "count": 12}]
    assert codes(structured(conversation, turn, claims, [SEARCH_3], complete=False)) == ["count_misstatement"]


def test_it_never_binds_a_claim_to_a_later_turns_receipt(conversation, turn) -> None:
    """A search that ran afterwards does not ground an earlier claim that it had run."""
    data = conversation(
        turn(
            "I used the search tool.",
            offered=["search"],
            receipts=[],
            claims=[{"kind": "invoked", "tool": "search"}],
        ),
        turn("Now it ran.", calls=[{"tool": "search", "result": rows(1)}], offered=["search"]),
    )
    assert [(f["turn"], f["code"]) for f in receipt_findings(run_suite(data))] == [
        (0, "fabricated_tool_reference")
    ]


def test_it_locates_a_structured_claims_text_in_the_answer(conversation, turn) -> None:
    """The claim's text is found case-insensitively and its span points into the answer."""
    answer = "Good news: the search returned 12 open tickets."
    data = conversation(
        turn(
            answer,
            calls=[{"tool": "search", "result": rows(3)}],
            claims=[
                {
                    "kind": "count",
                    "tool": "search",
                    "count": 12,
                    "text": "The Search returned 12 open tickets",
                }
            ],
        )
    )
    (finding,) = receipt_findings(run_suite(data))
    span = finding["claim"]
    assert answer[span["start"] : span["end"]] == span["text"] == "the search returned 12 open tickets"
    assert finding["evidence"] == [
        {"call_id": "call-1", "path": "", "start": 0, "end": len(str(rows(3)).replace("'", '"'))}
    ]


def test_it_gives_a_null_span_when_the_claim_text_is_not_in_the_answer(conversation, turn) -> None:
    """A structured claim whose words the answer does not hold still gets judged, without a span."""
    data = conversation(
        turn(
            "Shipped.",
            offered=["deploy"],
            receipts=[],
            claims=[{"kind": "invoked", "tool": "deploy", "text": "I ran deploy"}],
        )
    )
    (finding,) = receipt_findings(run_suite(data))
    assert finding["claim"] is None


def test_it_does_not_read_the_text_when_the_runtime_sent_claims(conversation, turn) -> None:
    """An empty `claims` list means the runtime found none; the answer is not re-read."""
    data = conversation(
        turn("The search returned 12 results.", calls=[{"tool": "search", "result": rows(3)}], claims=[])
    )
    assert codes(run_suite(data)) == []


# --- claims read from the answer ------------------------------------------------------------


def test_it_reads_a_false_absence_about_the_turns_only_tool(conversation, turn) -> None:
    """ "No logins were found" speaks of find_logins, the one tool that ran, which returned 2 rows."""
    answer = "No logins were found for account 7781 last night."
    data = conversation(
        turn(answer, calls=[{"tool": "find_logins", "args": {"account": "7781"}, "result": rows(2)}])
    )
    (finding,) = receipt_findings(run_suite(data))
    assert (finding["code"], finding["tool"], finding["recorded"]) == ("false_absence", "find_logins", 2)
    assert finding["claim"] == {"text": "No logins were found", "start": 0, "end": 20}
    assert "2 results" in finding["correction"]


@pytest.mark.parametrize(
    ("answer", "claimed"),
    [
        ("The search returned 12 results.", 12),
        ("Good news: the search returned twelve open tickets about the VPN.", 12),
        ("I ran the search and it found 1,200 results.", 1200),
        ("Search came back with 7 matches.", 7),
    ],
)
def test_it_reads_count_claims_in_figures_and_words(conversation, turn, answer: str, claimed: int) -> None:
    """A count written as a figure, with separators, or as a word is compared with the receipt."""
    data = conversation(turn(answer, calls=[{"tool": "search", "result": rows(3)}]))
    (finding,) = receipt_findings(run_suite(data))
    assert (finding["code"], finding["claimed"], finding["recorded"]) == ("count_misstatement", claimed, 3)
    assert answer[finding["claim"]["start"] : finding["claim"]["end"]] == finding["claim"]["text"]


def test_it_reads_found_n_things_when_the_things_are_what_the_tool_finds(conversation, turn) -> None:
    """ "found 3 tickets" is a count for search_tickets, whose name says what it returns."""
    data = conversation(turn("I found 3 tickets.", calls=[{"tool": "search_tickets", "result": rows(5)}]))
    assert codes(run_suite(data)) == ["count_misstatement"]


def test_it_reads_returned_no_results_as_an_absence(conversation, turn) -> None:
    """ "returned no results" is an absence, checked against the recorded rows."""
    data = conversation(
        turn("The search returned no results.", calls=[{"tool": "search", "result": rows(4)}])
    )
    assert codes(run_suite(data)) == ["false_absence"]


def test_it_recognises_a_tool_named_with_spaces_for_underscores(conversation, turn) -> None:
    """ "find logins" names find_logins, even with another tool in the turn."""
    data = conversation(
        turn(
            "I used find logins; nothing came back.",
            calls=[{"tool": "find_logins", "result": rows(2)}, {"tool": "audit_log", "result": rows(1)}],
        )
    )
    (finding,) = receipt_findings(run_suite(data))
    assert (finding["code"], finding["tool"]) == ("false_absence", "find_logins")


def test_it_flags_a_named_tool_that_never_ran_from_the_text(conversation, turn) -> None:
    """ "I ran the deploy tool" with only a search on record is a fabricated reference."""
    data = conversation(
        turn(
            "I ran the deploy tool and the fix is live.",
            calls=[{"tool": "search"}],
            offered=["search", "deploy"],
        )
    )
    (finding,) = receipt_findings(run_suite(data))
    assert (finding["code"], finding["claim"]["text"]) == (
        "fabricated_tool_reference",
        "I ran the deploy tool",
    )


def test_it_judges_an_unknown_tool_name_only_when_nothing_ran(conversation, turn) -> None:
    """ "the calendar tool" may be a loose name for a call that ran; with no call at all it cannot be."""
    answer = "I used the calendar tool."
    assert receipt_findings(run_suite(conversation(turn(answer, calls=[{"tool": "create_event"}])))) == []
    assert codes(run_suite(conversation(turn(answer, offered=[])))) == ["fabricated_tool_reference"]


def test_it_flags_a_search_claimed_when_the_only_offered_tool_was_never_called(conversation, turn) -> None:
    """ "I searched" speaks of the one tool offered; nothing ran, so it is fabricated."""
    data = conversation(turn("I searched and found nothing.", offered=["search"]))
    assert codes(run_suite(data)) == ["fabricated_tool_reference"]


def test_it_grounds_a_reference_to_a_search_from_an_earlier_turn(conversation, turn) -> None:
    """ "I searched earlier" binds to the latest earlier receipt of that tool."""
    data = conversation(
        turn("Here you go.", calls=[{"tool": "search", "result": rows(2)}], offered=["search"]),
        turn("I used the search tool earlier, and it returned 2 results.", offered=["search"]),
    )
    assert codes(run_suite(data)) == []


def test_it_reports_one_fabricated_reference_per_tool_and_turn(conversation, turn) -> None:
    """Two sentences about one missing call are one defect."""
    data = conversation(
        turn("I ran the deploy tool. The deploy tool returned 3 results.", offered=["deploy"])
    )
    assert codes(run_suite(data)) == ["fabricated_tool_reference"]


def test_it_says_ungroundable_for_a_text_claim_in_a_trimmed_window(conversation, turn) -> None:
    """The same rule holds for claims read from the text."""
    data = conversation(turn("Yes, I used the search tool earlier.", offered=["search"]), complete=False)
    assert [(f["code"], f["severity"]) for f in receipt_findings(run_suite(data))] == [
        ("ungroundable", "info")
    ]


@pytest.mark.parametrize(
    ("answer", "kwargs"),
    [
        ("Did you want me to search?", {"offered": ["search"]}),
        ("I can search for that.", {"offered": ["search"]}),
        ("I'll search for that once you enable tools.", {"offered": ["search"]}),
        ("I can't search right now; I have no tools in this turn.", {"offered": []}),
        (
            "Hi Randy, the search returned results for your account.",
            {"calls": [{"tool": "search", "result": []}]},
        ),
        (
            "If the search returned no results, widen the dates.",
            {"calls": [{"tool": "search", "result": [1]}]},
        ),
        ("The search returned about 10 results.", {"calls": [{"tool": "search", "result": [1, 2, 3]}]}),
        ("Of the 40 rows, I found 3 errors.", {"calls": [{"tool": "read_logs", "result": list(range(40))}]}),
        ("No errors were found in the logs.", {"calls": [{"tool": "read_logs", "result": [1, 2]}]}),
        ("There are no other matches.", {"calls": [{"tool": "search", "result": [1]}]}),
        ("The request returned 200 OK.", {"calls": [{"tool": "search", "result": [1]}]}),
        ("I used the right tool for this.", {"calls": [{"tool": "search", "result": [1]}]}),
        (
            "No logins were found.",
            {
                "calls": [
                    {"tool": "find_logins", "result": [1]},
                    {"tool": "create_login", "result": {"ok": True}},
                ]
            },
        ),
        ("No logins were found.", {"offered": ["find_logins"]}),
    ],
)
def test_it_reads_no_claim_from_offers_questions_hedges_and_unrelated_sentences(
    conversation, turn, answer: str, kwargs: dict[str, Any]
) -> None:
    """Precision over recall: only a firm report about a named or only tool is a claim."""
    assert receipt_findings(run_suite(conversation(turn(answer, **kwargs)))) == []


def test_it_reads_an_absence_of_what_the_call_was_filtered_on(conversation, turn) -> None:
    """ "No errors were found" is about the read when the read asked for errors."""
    data = conversation(
        turn(
            "No errors were found in the logs.",
            calls=[{"tool": "read_logs", "args": {"level": "error"}, "result": [1, 2]}],
        )
    )
    assert codes(run_suite(data)) == ["false_absence"]


def test_it_reads_i_can_confirm_as_a_report_not_an_offer(conversation, turn) -> None:
    """ "I can confirm…" introduces a statement of fact, unlike "I can search…"."""
    data = conversation(
        turn("I can confirm the search returned 12 results.", calls=[{"tool": "search", "result": rows(3)}])
    )
    assert codes(run_suite(data)) == ["count_misstatement"]


def test_a_claim_naming_a_reused_call_id_binds_to_the_call_of_its_tool(conversation, turn) -> None:
    """call_X looked up one reservation, then (answered) call_X searched and found two: a count
    claim about the search under call_X is judged by the search's receipt and result."""
    calls = [
        {"id": "call_X", "tool": "get_reservation_details", "result": {"reservation_id": "ZFA04Y"}},
        {"id": "call_X", "tool": "search", "result": rows(2)},
    ]
    claims = [{"kind": "count", "tool": "search", "call_id": "call_X", "count": 5}]
    (finding,) = receipt_findings(structured(conversation, turn, claims, None, calls=calls))
    assert (finding["code"], finding["recorded"]) == ("count_misstatement", 2)
    assert finding["evidence"] == [
        {"call_id": "call_X", "path": "", "start": 0, "end": len(json.dumps(rows(2)))}
    ]


# --- counts and absences said of the one list the sentence is about ------------------------------

ACCOUNT = {
    "tool": "get_account",
    "args": {"account_id": "acct_7781"},
    "result": {"id": "acct_7781", "plan": "basic"},
}


def tickets(*statuses: str, args: dict[str, Any] | None = None, tool: str = "list_tickets") -> dict[str, Any]:
    """A list read of the account's tickets, one row per status given."""
    rows_ = [{"ticket_id": f"TK-{500 + i}", "status": s} for i, s in enumerate(statuses)]
    return {"tool": tool, "args": args or {"account_id": "acct_7781"}, "result": {"tickets": rows_}}


def orders(n: int) -> dict[str, Any]:
    rows_ = [{"order_id": f"OR-{900 + i}", "state": "placed"} for i in range(n)]
    return {"tool": "list_orders", "args": {"account_id": "acct_7781"}, "result": rows_}


def told(conversation, turn, answer: str, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    return receipt_findings(run_suite(conversation(turn(answer, calls=list(calls)))))


def test_it_flags_a_count_said_of_the_one_list_the_sentence_is_about(conversation, turn) -> None:
    """Two tools ran and neither is named, but only list_tickets lists tickets: its 2 rows
    cannot be 7 open tickets, whatever the rows' status."""
    (finding,) = told(
        conversation, turn, "Your account has 7 open tickets.", ACCOUNT, tickets("open", "closed")
    )
    assert (finding["code"], finding["tool"], finding["claimed"], finding["recorded"]) == (
        "count_misstatement",
        "list_tickets",
        7,
        2,
    )
    assert finding["claim"] == {"text": "Your account has 7 open tickets", "start": 0, "end": 31}
    assert finding["call_id"] == "call-2"


def test_it_binds_no_count_when_two_lists_fit_the_sentence(conversation, turn) -> None:
    """Two reads list tickets: the sentence could be about either, so it is about neither."""
    answer = "Your account has 7 open tickets."
    both = (tickets("open", "closed"), tickets("open", "open", "open", tool="search_tickets"))
    assert told(conversation, turn, answer, ACCOUNT, *both) == []


def test_it_binds_to_the_list_a_word_before_the_noun_names(conversation, turn) -> None:
    """ "archived orders" picks list_archived_orders out of two order lists."""
    archived = {**orders(2), "tool": "list_archived_orders"}
    (finding,) = told(conversation, turn, "There are 4 archived orders.", orders(3), archived)
    assert (finding["tool"], finding["recorded"]) == ("list_archived_orders", 2)


@pytest.mark.parametrize(
    ("answer", "calls"),
    [
        ("You have 2 tickets.", (ACCOUNT, tickets("open", "closed"))),
        ("Your 3 orders are listed below.", (ACCOUNT, orders(3))),
        ("I closed 5 tickets last year.", (ACCOUNT, tickets("open", "closed"))),
        ("You have 2 free support credits.", (ACCOUNT, tickets("open", "closed"))),
        ("It will take 3 days.", (ACCOUNT, tickets("open", "closed"))),
    ],
)
def test_it_reads_nothing_wrong_in_a_count_that_matches_or_counts_something_else(
    conversation, turn, answer: str, calls: tuple[dict[str, Any], ...]
) -> None:
    assert told(conversation, turn, answer, *calls) == []


@pytest.mark.parametrize(
    ("answer", "calls"),
    [
        # A part of the list: fewer than it holds, of a kind not every row is.
        ("You have 3 upcoming orders.", (ACCOUNT, orders(6))),
        ("You have 1 open ticket.", (ACCOUNT, tickets("open", "closed", "closed"))),
        ("You have 2 tickets open.", (ACCOUNT, tickets("open", "open", "closed"))),
        ("2 of them are open.", (ACCOUNT, tickets("open", "open", "closed"))),
        ("You have 1 ticket this week.", (ACCOUNT, tickets("open", "closed"))),
        ("For March, you have 2 orders.", (ACCOUNT, orders(4))),
    ],
)
def test_it_leaves_a_count_of_part_of_the_list_alone(
    conversation, turn, answer: str, calls: tuple[dict[str, Any], ...]
) -> None:
    """Silence beats a wrong flag: a qualified count may be right about the rows it means."""
    assert told(conversation, turn, answer, *calls) == []


def test_it_flags_a_qualified_count_below_the_rows_of_that_kind(conversation, turn) -> None:
    """Two of the three rows say "open", so there are at least 2 open tickets, not 1."""
    answer = "You have 1 open ticket."
    (finding,) = told(conversation, turn, answer, ACCOUNT, tickets("open", "open", "closed"))
    assert finding["code"] == "count_misstatement"


def test_it_holds_a_larger_count_to_the_list_only_when_the_list_is_all_it_counts(conversation, turn) -> None:
    """The read asked for open tickets only: the account may well have 7 tickets in all,
    but it has at least 2, and 7 open ones would be more than the list of open ones holds."""
    open_only = tickets("open", "open", args={"account_id": "acct_7781", "status": "open"})
    assert told(conversation, turn, "You have 7 tickets.", ACCOUNT, open_only) == []
    assert [f["code"] for f in told(conversation, turn, "You have 7 open tickets.", ACCOUNT, open_only)] == [
        "count_misstatement"
    ]
    assert [f["code"] for f in told(conversation, turn, "You have 1 ticket.", ACCOUNT, open_only)] == [
        "count_misstatement"
    ]


@pytest.mark.parametrize(
    "result",
    [
        {"tickets": [{"ticket_id": "TK-1"}], "total": 7},  # the result states the count
        {"tickets": [{"ticket_id": "TK-1"}], "next_page": 2},  # one page of a longer list
    ],
)
def test_it_leaves_a_count_the_result_states_or_may_not_show_in_full(conversation, turn, result) -> None:
    page = {**tickets(), "result": result}
    assert told(conversation, turn, "You have 7 tickets.", ACCOUNT, page) == []


def test_it_leaves_a_count_of_another_record_or_owner(conversation, turn) -> None:
    """The list is acct_7781's; a sentence about account 4410 or about someone named is not
    held to it."""
    listed = tickets("open", "closed")
    assert told(conversation, turn, "Account 4410 has 7 tickets.", ACCOUNT, listed) == []
    assert told(conversation, turn, "Your manager has 7 tickets.", ACCOUNT, listed) == []
    assert told(conversation, turn, "For your other account, you have 7 tickets.", ACCOUNT, listed) == []


def test_it_leaves_a_count_after_a_call_that_may_have_changed_the_list(conversation, turn) -> None:
    """A ticket was closed after the list was read: the list no longer says what is open."""
    closed = {"tool": "close_ticket", "args": {"ticket_id": "TK-500"}, "result": {"ok": True}}
    assert told(conversation, turn, "You have 1 open ticket.", tickets("open", "open"), closed) == []


def test_it_flags_an_absence_said_of_the_one_list_the_sentence_is_about(conversation, turn) -> None:
    """ "No tickets were found" after get_account and list_tickets: the list had a row."""
    (finding,) = told(conversation, turn, "No tickets were found on your account.", ACCOUNT, tickets("open"))
    assert (finding["code"], finding["tool"], finding["recorded"]) == ("false_absence", "list_tickets", 1)
    assert finding["claim"]["text"] == "No tickets were found"


def test_it_flags_a_qualified_absence_only_when_a_row_is_of_that_kind(conversation, turn) -> None:
    """No open tickets: refuted by an open row, not by closed ones."""
    answer = "There are no open tickets on your account."
    assert told(conversation, turn, answer, ACCOUNT, tickets("closed", "closed")) == []
    (finding,) = told(conversation, turn, answer, ACCOUNT, tickets("closed", "open"))
    assert finding["code"] == "false_absence"


def test_an_absence_over_an_empty_list_is_left_to_the_negative_claims_checker(conversation, turn) -> None:
    """The list is empty, so the sentence holds as far as the receipts go; the record of a
    derived receipt cannot establish it, which is information, not a flag."""
    data = conversation(turn("There are no tickets on your account.", calls=[ACCOUNT, tickets()]))
    result = run_suite(data)
    assert receipt_findings(result) == []
    assert [(f["code"], f["severity"]) for f in result["findings"] if f["checker"] == "negative_claims"] == [
        ("absence_unverified", "info")
    ]


def test_it_leaves_a_subset_count_of_the_only_tool_alone_too(conversation, turn) -> None:
    """ "3 open tickets" of search_tickets' 5 mixed rows is a part of them; "3 tickets" is not."""
    mixed = {
        "tool": "search_tickets",
        "result": [{"status": s} for s in ("open", "closed", "open", "open", "closed")],
    }
    assert told(conversation, turn, "I found 3 open tickets.", mixed) == []
    assert [f["code"] for f in told(conversation, turn, "I found 3 tickets.", mixed)] == [
        "count_misstatement"
    ]


@pytest.mark.parametrize("unit", ["percent", "pct"])
def test_a_number_in_a_percent_unit_is_no_count_of_results(conversation, turn, unit: str) -> None:
    """ "returned 40 pct" says a share, not how many rows came back: no count to compare."""
    data = conversation(
        turn(f"The search returned 40 {unit}.", calls=[{"tool": "search", "result": rows(3)}])
    )
    assert codes(run_suite(data)) == []


def _listed(tool: str, result: dict[str, Any], answer: str) -> dict[str, Any]:
    return {
        "external_id": f"one-defect-{tool}",
        "messages": [
            {"role": "user", "content": "What did you find?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
            {"role": "assistant", "content": answer},
        ],
    }


@pytest.mark.parametrize(
    ("tool", "result", "answer", "claim"),
    [
        (
            "search_tickets",
            {"tickets": [{"id": "T-100"}, {"id": "T-200"}]},
            "There are 3 tickets.",
            "There are 3 tickets",
        ),
        (
            "list_bins",
            {"bins": [{"bin": "A1", "qty": 4}, {"bin": "B2", "qty": 7}]},
            "The search returned 5 bins.",
            "The search returned 5 bins",
        ),
    ],
)
def test_a_miscounted_list_is_one_flag_not_a_count_and_an_unsupported_value(
    tool: str, result: dict[str, Any], answer: str, claim: str
) -> None:
    """One defect, one flag: the count the receipt contradicts is not also an invented value."""
    data = _listed(tool, result, answer)
    flags = [(f["code"], f["claim"]["text"]) for f in run_suite(data)["findings"] if f["severity"] == "flag"]
    assert flags == [("count_misstatement", claim)]
    # Without the checker that compares it with the receipt, the figure is still flagged.
    alone = run_suite(data, skip={"tool_receipts"})["findings"]
    assert [f["code"] for f in alone if f["severity"] == "flag"] == ["unsupported_value"]
