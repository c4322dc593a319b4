"""Reading native conversations: validation with paths, turns, answers and derived receipts."""

from __future__ import annotations

from typing import Any

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import InvalidConversation, parse
from checks.suite.conversation import canonical, validate
from checks.suite.entailment import entailment_question
from checks.suite.evidence_index import build_index
from checks.suite.record import Record


def test_it_lists_every_problem_with_its_json_path() -> None:
    """One answer names each fault where it is, so a payload is fixed in one go."""
    errors = validate(
        {
            "turns": [
                {"messages": [{"role": "robot", "content": 3}]},
                {
                    "messages": [{"role": "tool", "content": "x"}],
                    "receipts": [{"call_id": "c", "result_count": -1}],
                },
            ]
        }
    )
    paths = {e["path"] for e in errors}
    assert {
        "$.external_id",
        "$.turns[0].messages[0].role",
        "$.turns[0].messages[0].content",
        "$.turns[1].messages[0].tool_call_id",
        "$.turns[1].receipts[0].tool",
        "$.turns[1].receipts[0].result_count",
    } <= paths
    assert all(e["message"] for e in errors)


def test_it_refuses_a_non_object_and_a_payload_with_both_turns_and_messages() -> None:
    """The root must be an object with exactly one of turns or messages."""
    assert validate([])[0]["path"] == "$"
    both = {"external_id": "x", "turns": [], "messages": []}
    assert any("not both" in e["message"] for e in validate(both))


def test_parse_raises_invalid_conversation_carrying_the_errors() -> None:
    """Parsing an invalid payload raises, with the same list validate gives."""
    with pytest.raises(InvalidConversation) as caught:
        parse({"external_id": "", "turns": []})
    assert {e["path"] for e in caught.value.errors} == {"$.external_id", "$.turns"}


def test_it_splits_a_flat_message_list_into_turns_at_each_user_message() -> None:
    """A system message joins the first turn; each user message opens a new one."""
    conversation = parse(
        {
            "external_id": "flat",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "One?"},
                {"role": "assistant", "content": "First."},
                {"role": "user", "content": "Two?"},
                {"role": "assistant", "content": "Second."},
            ],
        }
    )
    assert [t.answer for t in conversation.turns] == ["First.", "Second."]
    assert [len(t.messages) for t in conversation.turns] == [3, 2]
    assert canonical({"external_id": "flat", "messages": [{"role": "user", "content": "a"}]})["turns"][0][
        "messages"
    ] == [{"role": "user", "content": "a"}]


def test_the_answer_is_the_last_assistant_text_and_list_content_is_joined() -> None:
    """Text parts are joined by newlines; an assistant message with only tool calls is no answer."""
    conversation = parse(
        {
            "external_id": "parts",
            "turns": [
                {
                    "messages": [
                        {"role": "user", "content": "Hi"},
                        {
                            "role": "assistant",
                            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                        },
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [{"id": "c1", "function": {"name": "t", "arguments": "{"}}],
                        },
                        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                    ]
                }
            ],
        }
    )
    turn = conversation.turns[0]
    assert turn.answer == "a\nb"
    assert turn.tool_calls[0].arguments == "{"  # invalid JSON is kept as written


def test_it_derives_one_receipt_per_tool_message_when_none_are_given() -> None:
    """Counts from arrays, errors from error envelopes, handles in conversation order."""
    calls = [
        {"id": "a", "function": {"name": "search", "arguments": "{}"}},
        {"id": "b", "function": {"name": "lookup", "arguments": "{}"}},
        {"id": "c", "function": {"name": "remember", "arguments": "{}"}},
    ]
    conversation = parse(
        {
            "external_id": "derived",
            "turns": [
                {
                    "messages": [
                        {"role": "user", "content": "Go"},
                        {"role": "assistant", "content": None, "tool_calls": calls},
                        {"role": "tool", "tool_call_id": "a", "content": "[1, 2, 3]"},
                        {"role": "tool", "tool_call_id": "b", "content": '{"rows": []}'},
                        {"role": "tool", "tool_call_id": "c", "content": '{"error": "denied"}'},
                        {"role": "assistant", "content": "Done."},
                    ]
                },
                {
                    "messages": [
                        {"role": "user", "content": "Again"},
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [{"id": "d", "function": {"name": "search", "arguments": "{}"}}],
                        },
                        {"role": "tool", "tool_call_id": "d", "content": "plain text"},
                        {"role": "assistant", "content": "Ok."},
                    ]
                },
            ],
        }
    )
    first, second = conversation.turns
    summary = [(r.tool, r.ok, r.result_count, r.emptiness, r.handle, r.derived) for r in first.receipts]
    assert summary == [
        ("search", True, 3, "non-empty", "r1", True),
        ("lookup", True, 0, "empty", "r2", True),
        ("remember", False, None, "unknown", "r3", True),
    ]
    assert [(r.tool, r.result_count, r.handle) for r in second.receipts] == [("search", None, "r4")]


def test_given_receipts_are_the_ground_truth_and_the_transcript_only_fills_gaps() -> None:
    """A receipt's own fields win; a field it leaves out is read from its tool message."""
    conversation = parse(
        {
            "external_id": "given",
            "receipts_complete": False,
            "turns": [
                {
                    "messages": [
                        {"role": "user", "content": "Go"},
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [{"id": "a", "function": {"name": "search", "arguments": "{}"}}],
                        },
                        {"role": "tool", "tool_call_id": "a", "content": "[1, 2]"},
                        {"role": "assistant", "content": "Two."},
                    ],
                    "receipts": [{"call_id": "a", "tool": "search", "outcome": "denied"}],
                }
            ],
        }
    )
    (receipt,) = conversation.turns[0].receipts
    assert (receipt.ok, receipt.outcome, receipt.result_count, receipt.derived) == (False, "denied", 2, False)
    assert conversation.receipts_complete is False


# --- pairing calls (CONTRACT.md §6): an id may be reused once its call was answered ----------

RESERVATION = {"reservation_id": "ZFA04Y", "flights": [{"flight_number": "HAT001"}]}
UPDATED = {"reservation_id": "ZFA04Y", "flights": [{"flight_number": "HAT170"}, {"flight_number": "HAT022"}]}


def _reused_id(receipts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One turn whose model read a reservation under call_X and, once answered, changed it
    under call_X again (as real models do)."""
    turn = build_turn(
        "Your reservation ZFA04Y now has flights HAT170 and HAT022.",
        calls=[
            {
                "id": "call_X",
                "tool": "get_reservation_details",
                "args": {"reservation_id": "ZFA04Y"},
                "result": RESERVATION,
            },
            {
                "id": "call_X",
                "tool": "update_reservation_flights",
                "args": {"reservation_id": "ZFA04Y", "flights": ["HAT170", "HAT022"]},
                "result": UPDATED,
            },
        ],
        receipts=receipts,
    )
    return build_conversation(turn)


def test_it_accepts_an_id_reused_after_its_call_was_answered() -> None:
    """A reused id is no reason to refuse: each tool message answers the call waiting for it."""
    assert validate(_reused_id()) == []
    turn = parse(_reused_id()).turns[0]
    first, second = turn.tool_calls
    assert turn.answers == {2: first, 4: second}
    assert turn.result_of(second) is turn.messages[4] and turn.result_index(first) == 2


def test_derived_receipts_take_the_tool_and_result_of_the_call_each_message_answers() -> None:
    """The second result of call_X is the update's, with its own tool name and count."""
    turn = parse(_reused_id()).turns[0]
    assert [(r.call_id, r.tool, r.result_count) for r in turn.receipts] == [
        ("call_X", "get_reservation_details", 1),
        ("call_X", "update_reservation_flights", 2),
    ]
    first, second = turn.tool_calls
    assert [turn.call_of(r) for r in turn.receipts] == [first, second]
    assert [turn.receipt_of(c) for c in (first, second)] == list(turn.receipts)


def test_given_receipts_of_a_reused_id_pair_in_order_with_its_calls() -> None:
    """The k-th receipt of an id records the k-th call of that id, and reads that call's result."""
    receipts = [
        {"call_id": "call_X", "tool": "get_reservation_details", "effect": "read"},
        {"call_id": "call_X", "tool": "update_reservation_flights", "effect": "write"},
    ]
    conversation = parse(_reused_id(receipts))
    turn = conversation.turns[0]
    assert [(r.tool, r.result_count) for r in turn.receipts] == [
        ("get_reservation_details", 1),
        ("update_reservation_flights", 2),
    ]
    placed = Record.of(conversation).calls
    assert [
        (c.receipt.tool, c.message_index, c.result is not None and "HAT170" in c.result.text) for c in placed
    ] == [
        ("get_reservation_details", 1, False),
        ("update_reservation_flights", 3, True),
    ]


def test_each_result_in_the_evidence_index_carries_the_call_it_answers() -> None:
    """A tool source names the tool and arguments of its own call, not the latest of its id."""
    index = build_index(parse(_reused_id()))
    tools = [(s.call_id, s.tool, s.arguments) for s in index.sources if s.role == "tool"]
    assert tools == [
        ("call_X", "get_reservation_details", {"reservation_id": "ZFA04Y"}),
        (
            "call_X",
            "update_reservation_flights",
            {"reservation_id": "ZFA04Y", "flights": ["HAT170", "HAT022"]},
        ),
    ]


def test_the_judge_is_shown_each_result_under_its_own_tool() -> None:
    """The entailment question labels each result with the tool of the call it answers."""
    question, _ = entailment_question(parse(_reused_id()).turns[0])
    assert question.index("[call_X: get_reservation_details]") < question.index(
        "[call_X: update_reservation_flights]"
    )


def test_it_still_refuses_a_tool_message_that_answers_no_waiting_call() -> None:
    """An id no call of the turn had, or whose call was answered already, answers nothing."""
    payload = _reused_id()
    messages = payload["turns"][0]["messages"]
    messages.insert(5, dict(messages[4]))  # a second answer to the update
    errors = validate(payload)
    assert [e["path"] for e in errors] == ["$.turns[0].messages[5].tool_call_id"]
    assert "call_X" in errors[0]["message"]
    messages[5]["tool_call_id"] = "call_Y"
    assert [e["path"] for e in validate(payload)] == ["$.turns[0].messages[5].tool_call_id"]


def test_it_refuses_an_id_reused_while_its_call_still_waits_for_its_answer() -> None:
    """Two calls waiting under one id leave open which result answers which."""
    payload = _reused_id()
    messages = payload["turns"][0]["messages"]
    messages[2], messages[3] = messages[3], messages[2]  # both calls before either answer
    errors = validate(payload)
    assert [e["path"] for e in errors] == ["$.turns[0].messages[2].tool_calls[0].id"]
    assert "$.turns[0].messages[1].tool_calls[0].id" in errors[0]["message"]
    with pytest.raises(InvalidConversation):
        parse(payload)


@pytest.mark.parametrize(
    ("result", "ok"),
    [
        ("Error: ticket T-7 could not be closed", False),
        ("An error occurred while running the tool. Please try again.", False),
        ('{"status": "failed", "reason": "card declined"}', False),
        ('{"error": {"code": 409, "message": "conflict"}}', False),
        ('{"error": null, "ticket": "T-7", "state": "closed"}', True),
        ('{"status": "available", "seats": 4}', True),
        ("Failed logins: 3 in the last hour", True),
        ('{"failed_logins": 3, "status": "ok"}', True),
        ("Error: " + "x" * 3000, True),  # a long text that merely opens with the word
    ],
)
def test_a_derived_receipt_reads_failures_written_as_text_or_status(result: str, ok: bool) -> None:
    """Amendment 1.1: an error-shaped result derives ok false and outcome error; a read whose
    data mentions failures does not."""
    turn = build_turn("Done.", calls=[{"tool": "close_ticket", "result": result}])
    [receipt] = parse(build_conversation(turn)).turns[0].receipts
    assert (receipt.ok, receipt.outcome) == (ok, "ok" if ok else "error")
