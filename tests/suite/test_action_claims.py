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
