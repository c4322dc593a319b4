"""The action_claims checker: completed actions that nothing performed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.suite import capability_statement, run_suite
from checks.suite.action_claims import find_action_claims

SENCHA = "# Favorite Tea Preference Saved\n\nI've saved your favorite tea as **sencha**."


def action_findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] == "action_claims"]


def judge_without_tools(conversation, turn, answer: str) -> list[dict[str, Any]]:
    return action_findings(run_suite(conversation(turn(answer, offered=[]))))


def test_it_flags_the_sencha_reply_that_saved_nothing(conversation, turn) -> None:
    """The verbatim failure: a confident report of a save, with no tool offered or run."""
    (finding,) = judge_without_tools(conversation, turn, SENCHA)
    assert finding["code"] == "unverified_action"
    assert finding["severity"] == "flag"
    assert finding["turn"] == 0
    assert finding["evidence"] == []
    start, end = finding["claim"]["start"], finding["claim"]["end"]
    assert SENCHA[start:end] == finding["claim"]["text"] == "I've saved"


def test_it_does_not_flag_a_headline_alone_but_flags_done_with_a_claim(conversation, turn) -> None:
    """A heading that sounds finished asserts nothing; "Done! I've updated…" does."""
    assert judge_without_tools(conversation, turn, "## Changes Applied\n\nAll good!") == []
    (finding,) = judge_without_tools(conversation, turn, "Done! I've updated the config.")
    assert finding["claim"]["text"] == "I've updated"


@pytest.mark.parametrize(
    "answer",
    [
        "Sencha is a Japanese green tea.",
        "Here is how you'd index the workspace: run the /api/workspace/index route.",
        "The function returns a Result, so errors propagate to the caller.",
        "I can show you an example.",
        "Hi Randy, sencha is a lovely choice.",
        "I ran into a problem understanding the question; could you rephrase it?",
        "Well done! Sencha is a great pick.",
        "I've written a short haiku about sencha below:",
        "```\nI ran the migration\n```",
    ],
)
def test_it_leaves_ordinary_answers_alone(conversation, turn, answer: str) -> None:
    """Answers that report no action of the model's get no notice, whole words only."""
    assert judge_without_tools(conversation, turn, answer) == []


@pytest.mark.parametrize(
    "answer",
    [
        "I can't save that right now because I have no tools in this turn.",
        "I don't have access to your files, so I can't read it.",
        "I could save that if you enable the memory tool.",
        "Let me know if you want me to try that again.",
        "I'll save that once you enable tools.",
        "Did you want me to search?",
        "I can search for that.",
        "Have I saved it? Not yet: I need a tool for that.",
        "If I had saved it, you would see it in your list.",
        "I\u2019m unable to do that; nothing has been saved.",
        "I've saved nothing yet, because no tool is available.",
    ],
)
def test_it_never_corrects_an_honest_refusal_offer_or_question(conversation, turn, answer: str) -> None:
    """Refusals, offers, plans, conditions and questions are the truthful answers."""
    assert judge_without_tools(conversation, turn, answer) == []


def test_it_reads_typographic_apostrophes_and_keeps_the_span_as_written(conversation, turn) -> None:
    """ "I’ve saved" with a curly apostrophe is the same claim; the span shows the text as sent."""
    answer = "Sure. I\u2019ve saved it for next time."
    (finding,) = judge_without_tools(conversation, turn, answer)
    assert finding["claim"]["text"] == "I\u2019ve saved"
    assert answer[finding["claim"]["start"] : finding["claim"]["end"]] == "I\u2019ve saved"


def test_it_is_not_silenced_by_a_sign_off_in_another_sentence(conversation, turn) -> None:
    """ "Let me know…" closes many replies; it does not turn an earlier false report into an offer."""
    (finding,) = judge_without_tools(
        conversation, turn, "I've saved your preference. Let me know if you need anything else."
    )
    assert finding["claim"]["text"] == "I've saved"


def test_it_fires_without_any_cooperation_from_the_prompt(conversation, turn) -> None:
    """The audit reads only the answer and the record; no instruction to the model is involved."""
    answer = "I have saved the file and successfully created the report."
    (finding,) = judge_without_tools(conversation, turn, answer)
    assert [p["text"] for p in finding["phrases"]] == ["I have saved", "successfully created"]
    assert "saved or created" in finding["correction"]


def test_its_notice_speaks_as_receipts_states_the_fact_and_never_echoes_the_claim(conversation, turn) -> None:
    """The correction is server-authored: it names who speaks and what did not happen."""
    (finding,) = judge_without_tools(conversation, turn, "I've saved your tea preference.")
    assert finding["correction"].startswith("Note from Receipts:")
    assert "nothing was actually saved" in finding["correction"]
    assert finding["claim"]["text"].lower() not in finding["correction"].lower()
    assert "I " not in finding["correction"]


def test_it_accepts_a_claim_once_a_tool_really_did_it(conversation, turn) -> None:
    """A successful call may well have saved it; keyword matching must not second-guess it."""
    data = conversation(
        turn(
            "I've saved your preference.",
            calls=[{"tool": "memory_remember", "result": {"ok": True, "id": "mem-1"}}],
            receipts=[{"call_id": "call-1", "tool": "memory_remember", "ok": True, "effect": "write"}],
        )
    )
    assert action_findings(run_suite(data)) == []


def test_it_counts_a_call_shown_in_the_transcript_as_a_tool_that_ran(conversation, turn) -> None:
    """The transcript is complete: a call it shows ran, even if no receipt describes it."""
    data = conversation(turn("I've saved it.", calls=[{"tool": "memory_remember"}], receipts=[]))
    assert action_findings(run_suite(data)) == []


def test_it_flags_success_claimed_over_a_denied_write(conversation, turn) -> None:
    """Every call able to do the action was denied, yet the answer says it was done."""
    result = '{"error": "permission denied"}'
    data = conversation(
        turn(
            "Done! I've saved your favourite tea as sencha.",
            calls=[{"tool": "memory_remember", "result": result}],
            receipts=[
                {
                    "call_id": "call-1",
                    "tool": "memory_remember",
                    "ok": False,
                    "outcome": "denied",
                    "effect": "write",
                }
            ],
        )
    )
    (finding,) = action_findings(run_suite(data))
    assert finding["code"] == "failed_action_claimed"
    assert finding["severity"] == "flag"
    assert finding["evidence"] == [{"call_id": "call-1", "path": "", "start": 0, "end": len(result)}]
    assert "memory_remember was denied" in finding["correction"]
    assert finding["correction"].startswith("Note from Receipts:")


def test_it_judges_derived_receipts_by_their_error_envelope(conversation, turn) -> None:
    """With no receipts sent, a result carrying an `error` key is a failed call."""
    data = conversation(
        turn("I've deleted the file.", calls=[{"tool": "fs_delete", "result": {"error": "busy"}}])
    )
    (finding,) = action_findings(run_suite(data))
    assert finding["code"] == "failed_action_claimed"
    assert "nothing was actually deleted" in finding["correction"]


def test_it_ignores_a_failed_read_when_the_write_succeeded(conversation, turn) -> None:
    """Only calls that could have done the action count: a successful write stands."""
    data = conversation(
        turn(
            "I've saved it.",
            calls=[{"tool": "memory_search", "result": {"error": "down"}}, {"tool": "memory_remember"}],
            receipts=[
                {"call_id": "call-1", "tool": "memory_search", "ok": False, "effect": "read"},
                {"call_id": "call-2", "tool": "memory_remember", "ok": True, "effect": "write"},
            ],
        )
    )
    assert action_findings(run_suite(data)) == []


def test_it_flags_when_every_write_failed_even_if_a_read_succeeded(conversation, turn) -> None:
    """A successful read cannot have saved anything, so it does not excuse the failed write."""
    data = conversation(
        turn(
            "I've saved it.",
            calls=[{"tool": "memory_search"}, {"tool": "memory_remember", "result": {"error": "full"}}],
            receipts=[
                {"call_id": "call-1", "tool": "memory_search", "ok": True, "effect": "read"},
                {"call_id": "call-2", "tool": "memory_remember", "ok": False, "effect": "write"},
            ],
        )
    )
    (finding,) = action_findings(run_suite(data))
    assert [e["call_id"] for e in finding["evidence"]] == ["call-2"]


def test_it_reports_each_turn_at_its_own_index(conversation, turn) -> None:
    """Findings carry the turn they stand in, in turn order."""
    data = conversation(
        turn("Sencha is a green tea.", offered=[]),
        turn("I've booked the table.", offered=[]),
        turn("I have sent the email.", offered=[]),
    )
    assert [f["turn"] for f in action_findings(run_suite(data))] == [1, 2]


def test_find_action_claims_keeps_answer_order_and_drops_overlaps() -> None:
    """ "I've successfully saved" is one claim, not two; claims come in the order written."""
    claims = find_action_claims("I've successfully saved it. Then I ran the export.")
    assert [c.span.text for c in claims] == ["I've successfully saved", "I ran"]
    assert [c.verb for c in claims] == ["saved", "run"]


def test_capability_statement_says_plainly_when_there_are_no_tools() -> None:
    """An empty tool list is spelled out, with what the model cannot do."""
    statement = capability_statement(())
    assert "NO tools" in statement
    assert "cannot" in statement


def test_capability_statement_lists_the_real_tool_names() -> None:
    """Offered tools are named one by one, and the no-tools warning is absent."""
    statement = capability_statement(("memory_search", "rag.search"))
    assert "memory_search" in statement
    assert "rag.search" in statement
    assert "NO tools" not in statement


def test_capability_statement_counts_recalled_memories_without_quoting_them() -> None:
    """Recall is reported as a number only, singular or plural."""
    assert "3 relevant memories" in capability_statement((), recall_hits=3)
    assert "1 relevant memory " in capability_statement((), recall_hits=1)
    assert "relevant" not in capability_statement(())


def test_capability_statement_for_unknown_tools_still_forbids_unbacked_claims() -> None:
    """When the offered tools are unknown, it neither lists nor denies them."""
    statement = capability_statement(None)
    assert "NO tools" not in statement
    assert "tool result" in statement


def test_a_failed_write_under_a_reused_id_points_at_its_own_result(conversation, turn) -> None:
    """call_X read the reservation, then call_X again failed to change it: the finding's
    evidence is the failed change's result, not the read's (CONTRACT.md §6)."""
    failure = {"error": "payment declined"}
    data = conversation(
        turn(
            "I've changed your flights.",
            calls=[
                {"id": "call_X", "tool": "get_reservation_details", "result": {"reservation_id": "ZFA04Y"}},
                {"id": "call_X", "tool": "update_reservation_flights", "result": failure},
            ],
            receipts=[
                {"call_id": "call_X", "tool": "get_reservation_details", "effect": "read"},
                {"call_id": "call_X", "tool": "update_reservation_flights", "effect": "write"},
            ],
        )
    )
    (finding,) = action_findings(run_suite(data))
    assert finding["code"] == "failed_action_claimed"
    assert finding["evidence"] == [
        {"call_id": "call_X", "path": "", "start": 0, "end": len(json.dumps(failure))}
    ]


# --- claims against the calls that could have made them (amendment 1.1) -------------------

ORDER = {"order_id": "ORD-88", "status": "open", "gift_wraps": 0, "items": [{"sku": "MUG-2", "qty": 1}]}
ADDRESS = {"tool": "update_order_address", "args": {"order_id": "ORD-88", "city": "Leeds"}, "result": ORDER}


def judged(*turns: dict[str, Any]) -> list[tuple[int, str, str]]:
    from suite_helpers import build_conversation

    result = run_suite(build_conversation(*turns))
    return [(f["turn"], f["code"], f["claim"]["text"]) for f in action_findings(result)]


def read_then(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool": "get_order", "args": {"order_id": "ORD-88"}, "result": ORDER}, *calls]


def test_an_action_reported_after_only_a_read_is_unverified(turn) -> None:
    """Real agents read before they report: a read never added anything."""
    findings = judged(turn("Two gift wraps have been added to your order.", calls=read_then()))
    assert findings == [(0, "unverified_action", "have been added")]


def test_a_write_of_another_thing_does_not_back_the_claim_but_the_right_one_does(turn) -> None:
    """Changing the address adds no gift wraps; a call whose arguments name them does."""
    address = {
        "tool": "update_order_address",
        "args": {"order_id": "ORD-88", "city": "Leeds"},
        "result": ORDER,
    }
    wraps = {"tool": "update_order_extras", "args": {"order_id": "ORD-88", "gift_wraps": 2}, "result": ORDER}
    answer = "Your address is changed, and two gift wraps have been added to your order."
    assert judged(turn(answer, calls=read_then(address))) == [(0, "unverified_action", "have been added")]
    assert judged(turn(answer, calls=read_then(address, wraps))) == []


def test_a_verb_the_tool_cannot_do_is_unverified(turn) -> None:
    """Sending a receipt cancels no order; cancel_order does."""
    send = {"tool": "send_receipt", "args": {"order_id": "ORD-88"}, "result": {"sent": True}}
    cancel = {"tool": "cancel_order", "args": {"order_id": "ORD-88"}, "result": {"status": "cancelled"}}
    answer = "Your order ORD-88 has been cancelled."
    assert judged(turn(answer, calls=read_then(send))) == [(0, "unverified_action", "has been cancelled")]
    assert judged(turn(answer, calls=read_then(cancel))) == []


def test_a_failure_written_as_text_makes_the_claim_a_failed_action(turn) -> None:
    """cancel_order answered "Error: …": the cancellation reported did not happen."""
    cancel = {
        "tool": "cancel_order",
        "args": {"order_id": "ORD-88"},
        "result": "Error: order ORD-88 has shipped",
    }
    findings = judged(turn("Your order ORD-88 has been cancelled.", calls=read_then(cancel)))
    assert findings == [(0, "failed_action_claimed", "has been cancelled")]


def test_has_been_may_report_an_earlier_turns_act_i_have_may_not(turn) -> None:
    """Turn 0 cancelled the order; turn 1 only reads. "has been cancelled" recalls turn 0;
    "- Added two gift wraps" in turn 1 is a new act nothing did."""
    cancel = {"tool": "cancel_order", "args": {"order_id": "ORD-88"}, "result": {"status": "cancelled"}}
    first = turn("Done, it is cancelled.", calls=[cancel], user="Cancel ORD-88.")
    recap = turn("As requested, your order has been cancelled.", calls=read_then(), user="Status?")
    assert judged(first, recap) == []
    new = turn("Changes:\n- Added two gift wraps", calls=read_then(), user="Status?")
    assert judged(first, new) == [(1, "unverified_action", "Added")]


def test_a_counted_thing_reported_added_names_its_object(turn) -> None:
    """ "- Gift wraps: 2 gift wraps added" after a change of the address is unverified."""
    address = {
        "tool": "update_order_address",
        "args": {"order_id": "ORD-88", "city": "Leeds"},
        "result": ORDER,
    }
    findings = judged(turn("Updated:\n- Gift wraps: 2 gift wraps added", calls=read_then(address)))
    assert findings == [(0, "unverified_action", "2 gift wraps added")]


def test_content_the_answer_saved_is_not_a_kind_of_record(turn) -> None:
    """ "your favourite tea" is what was saved, not a kind the tools deal in: memory_remember
    backs it though its name says nothing of tea."""
    save = {"tool": "memory_remember", "args": {"text": "tea: sencha"}, "result": {"ok": True}}
    assert judged(turn("I've saved your favourite tea as sencha.", calls=[save])) == []


# --- a write's record and a state read -----------------------------------------------------
# Two unrelated desks: a help desk's tickets and a warehouse's stock.

STATE_CASES = [
    (
        "close_ticket",
        {"ticket_id": "T-88"},
        {"ticket_id": "T-88", "status": "resolved", "owner": "dana"},
        "Ticket T-88 is closed. Its status has been updated to 'resolved'.",
    ),
    (
        "receive_shipment",
        {"shipment": "SH-4"},
        {"sku": "BOLT-M6", "location": "aisle 7", "state": "shelved"},
        "The shipment arrived, and the pallet's location has been changed to 'aisle 7'.",
    ),
]


@pytest.mark.parametrize(("tool", "args", "record", "answer"), STATE_CASES)
def test_a_part_the_writes_record_shows_as_stated_is_backed(
    conversation, turn, tool, args, record, answer
) -> None:
    """A write's result is the receipt of what it did: where the record it returns holds the
    part the claim names with the text the sentence states, the write did it, whatever the
    verb of its name."""
    calls = [{"tool": tool, "args": args, "result": record}]
    assert action_findings(run_suite(conversation(turn(answer, calls=calls)))) == []


@pytest.mark.parametrize(("tool", "args", "record", "answer"), STATE_CASES)
def test_a_part_stated_otherwise_than_the_record_shows_is_still_flagged(
    conversation, turn, tool, args, record, answer
) -> None:
    """The same claim after a write whose record shows another text for that part."""
    other = {key: "pending" if isinstance(value, str) else value for key, value in record.items()}
    calls = [{"tool": tool, "args": args, "result": other}]
    (finding,) = action_findings(run_suite(conversation(turn(answer, calls=calls))))
    assert finding["code"] == "unverified_action"


@pytest.mark.parametrize(
    ("tool", "record", "answer"),
    [
        ("get_ticket", {"ticket_id": "T-88", "status": "cancelled"}, "- **T-88**: Cancelled (nothing to do)"),
        ("lookup_pallet", {"pallet": "P-2", "state": "canceled"}, "Pallet P-2's order is cancelled."),
    ],
)
def test_a_state_a_read_record_holds_is_no_action_claimed(conversation, turn, tool, record, answer) -> None:
    """Restating a record's state ("Status: cancelled") after reading it claims no action;
    the same words told in the first person do."""
    calls = [{"tool": tool, "result": record}]
    assert action_findings(run_suite(conversation(turn(answer, calls=calls)))) == []
    (finding,) = action_findings(run_suite(conversation(turn("I've cancelled it for you.", calls=calls))))
    assert finding["code"] == "unverified_action"


@pytest.mark.parametrize(
    ("tool", "record", "unset", "answer"),
    [
        # a concert box office: a count of seats under a member named for their state
        (
            "get_account",
            {"account": "A-5", "seats_booked": 2},
            {"seats_booked": 0},
            "Two seats are booked for Friday.",
        ),
        # a parcel locker: the time a notice went out, under a member named for it
        (
            "get_parcel",
            {"parcel": "P-9", "notice_sent_at": "2025-03-01T10:00:00Z"},
            {"notice_sent_at": None},
            "The pickup notice has been sent.",
        ),
    ],
)
def test_a_state_a_read_record_names_a_member_for_is_no_action_claimed(
    conversation, turn, tool, record, unset, answer
) -> None:
    """A member named for a state and set ("seats_booked": 2, "notice_sent_at": a time) says the
    record is in it, as a status text would; unset (zero, null), it says nothing, and the claim
    stands."""
    calls = [{"tool": tool, "result": record}]
    assert action_findings(run_suite(conversation(turn(answer, calls=calls)))) == []
    calls = [{"tool": tool, "result": record | unset}]
    (finding,) = action_findings(run_suite(conversation(turn(answer, calls=calls))))
    assert finding["code"] == "unverified_action"


@pytest.mark.parametrize(
    ("record", "answer"),
    [
        # bookkeeping every record has, a state that may come, one that did not, and a part's
        ({"address": "1 Main St", "updated_at": "2025-01-02T10:00:00Z"}, "Your address has been updated."),
        ({"order": "O-1", "can_be_cancelled": True}, "Your order has been cancelled."),
        ({"order": "O-1", "email_not_sent": True}, "Your receipt has been sent."),
        ({"order": "O-1", "cancelled_items": ["SKU-3"]}, "Your order has been cancelled."),
        # the state of another thing than the claim names
        ({"venue": "V-2", "tickets_booked": 2}, "Your table is booked."),
    ],
)
def test_a_member_that_names_no_state_of_the_claimed_thing_leaves_the_claim_standing(
    conversation, turn, record, answer
) -> None:
    calls = [{"tool": "get_record", "result": record}]
    (finding,) = action_findings(run_suite(conversation(turn(answer, calls=calls))))
    assert finding["code"] == "unverified_action"


def test_a_status_is_its_own_singular() -> None:
    from checks.suite.text import singular

    assert singular("status") == "status"
    assert singular("tickets") == "ticket"


@pytest.mark.parametrize(
    ("answer", "read", "able"),
    [
        (
            "I've moved your room to a quiet floor.",
            {"tool": "get_room", "args": {"room": "412"}, "result": {"room": "412", "floor": 4}},
            {"tool": "move_room", "args": {"room": "412", "floor": 9}, "result": {"room": "912"}},
        ),
        (
            "I have reserved two pallets of bolts for the order.",
            {"tool": "lookup_stock", "args": {"sku": "BOLT"}, "result": {"sku": "BOLT", "pallets": 7}},
            {"tool": "reserve_pallets", "args": {"sku": "BOLT", "pallets": 2}, "result": {"held": 2}},
        ),
    ],
)
def test_an_action_no_call_that_ran_can_perform_is_unverified(turn, answer, read, able) -> None:
    """A move or a reservation reported after only a read is flagged; after a call whose
    name can do it, it is not."""
    assert judged(turn(answer, calls=[read])) == [
        (0, "unverified_action", answer.split(" your")[0].split(" two")[0])
    ]
    assert judged(turn(answer, calls=[read, able])) == []


@pytest.mark.parametrize(
    ("tool", "args", "record", "answer", "missing"),
    [
        (
            "close_ticket",
            {"ticket_id": "T-9"},
            {"ticket_id": "T-9", "status": "closed", "ledger": [{"entry": "credit", "amount": 15}]},
            "Ticket T-9 is closed, and the credit of $15 has been added to your account.",
            "charge",
        ),
        (
            "cancel_shipment",
            {"shipment": "SH-2"},
            {"shipment": "SH-2", "events": [{"event": "restock", "units": 40}]},
            "Shipment SH-2 is cancelled; a restock of 40 units has been scheduled.",
            "hold",
        ),
    ],
)
def test_a_thing_the_writes_record_holds_was_made_by_that_write(
    turn, tool, args, record, answer, missing
) -> None:
    """The record a write returns shows what it made (a credit, a restock): a claim that it was
    added or scheduled is backed by that write, whatever the verb of the tool's name (a write
    on a record covers the parts the record holds). Where the record holds no such thing,
    the claim is flagged."""
    calls = [{"tool": tool, "args": args, "result": record}]
    assert judged(turn(answer, calls=calls)) == []
    other = json.loads(
        json.dumps(record).replace('"credit"', f'"{missing}"').replace('"restock"', f'"{missing}"')
    )
    (finding,) = judged(turn(answer, calls=[{"tool": tool, "args": args, "result": other}]))
    assert finding[1] == "unverified_action"


LICENCES = {"tool": "get_licences", "args": {"user": "jdoe"}, "result": {"licences": [], "seats_free": 4}}


@pytest.mark.parametrize(
    ("calls", "answer"),
    [
        # a loyalty desk: the voucher tool's result says, as a sentence, that the voucher was added
        (
            [
                {
                    "tool": "send_voucher",
                    "args": {"member": "M-2", "value": 20},
                    "result": "Voucher V-88 added to member M-2 with value 20.",
                }
            ],
            "A $20 voucher has been added to your account.",
        ),
        # an IT desk: after a read of the user's licences, the notifier's result says one was assigned
        (
            [
                LICENCES,
                {
                    "tool": "notify_user",
                    "args": {"user": "jdoe"},
                    "result": "Licence L-301 assigned to user jdoe.",
                },
            ],
            "I've assigned the licence to you; the key is in your inbox.",
        ),
    ],
)
def test_a_result_that_says_it_did_the_act_backs_the_claim_whatever_the_tools_verb(
    turn, calls: list[dict[str, Any]], answer: str
) -> None:
    """The result is the receipt of what a call did: "Voucher V-88 added to member M-2" backs "a
    voucher has been added", though sending is no adding; a result that says the act was not done,
    not yet or not for sure, or names no record it did it to, backs nothing."""
    assert judged(turn(answer, calls=calls)) == []
    claim = find_action_claims(answer)[0].span.text
    for text in (
        "Request for M-2 queued for review.",
        "Licence could not be assigned: no seats left.",
        "Voucher V-88 will be added once a manager approves it.",
        "Licence L-301 assigned, then revoked.",
        "Hint: vouchers and licences are added or assigned by the front desk.",
    ):
        changed = [*calls[:-1], {**calls[-1], "result": text}]
        assert judged(turn(answer, calls=changed)) == [(0, "unverified_action", claim)]


@pytest.mark.parametrize(
    ("call", "answer", "moved"),
    [
        # a clinic: the appointment's record says when it was booked
        (
            {
                "tool": "get_appointment",
                "args": {"id": "A-7"},
                "result": {"id": "A-7", "booked_at": "2025-03-04T09:12:00"},
            },
            "Your appointment A-7:\n- Booked this morning at 9:12 AM, with Dr Osei.",
            ("9:12 AM", "9:40 AM"),
        ),
        # a library: the loan's record says when it was updated
        (
            {
                "tool": "get_loan",
                "args": {"loan": "L-2"},
                "result": {"loan": "L-2", "renewed": "2025-06-02 16:05:00"},
            },
            "Loan L-2:\n- Updated on June 2 at 16:05, due back June 30.",
            ("16:05", "17:05"),
        ),
    ],
)
def test_an_act_dated_by_a_time_a_record_holds_restates_the_record(
    turn, call: dict[str, Any], answer: str, moved: tuple[str, str]
) -> None:
    """A list item opening with an act, dated by the clock time of a timestamp the records hold, says
    when the record says it was done; at a time no record holds, it reports an act nothing did."""
    assert judged(turn(answer, calls=[call])) == []
    verb = find_action_claims(answer)[0].span.text
    assert judged(turn(answer.replace(*moved), calls=[call])) == [(0, "unverified_action", verb)]


SLOTS = {  # a gym: a read of free slots, each with its start; nothing here books anything
    "tool": "search_class_slots",
    "args": {"class": "spin", "date": "2025-03-04"},
    "result": {
        "slots": [
            {"slot": "S-1", "starts_at": "2025-03-04T18:00:00"},
            {"slot": "S-2", "starts_at": "2025-03-04T19:30:00"},
        ]
    },
}
APPOINTMENT = {  # a clinic: the record says when it was booked, and that it is still confirmed
    "tool": "get_appointment",
    "args": {"id": "A-7"},
    "result": {"id": "A-7", "status": "confirmed", "booked_at": "2025-03-04T09:12:00"},
}


@pytest.mark.parametrize(
    ("call", "answer"),
    [
        (SLOTS, "Your spin class is booked for 7:30 PM tonight."),
        (SLOTS, "- Booked: spin class at 7:30 PM tonight (slot S-2)."),
        (APPOINTMENT, "Appointment A-7:\n- Cancelled this morning at 9:12 AM."),
    ],
)
def test_a_time_a_record_holds_for_another_act_dates_no_claim(
    turn, call: dict[str, Any], answer: str
) -> None:
    """A slot's start is no time anything was done, and a booking's time dates no cancellation: the
    claims stay unverified."""
    verb = find_action_claims(answer)[0].span.text
    assert judged(turn(answer, calls=[call])) == [(0, "unverified_action", verb)]
