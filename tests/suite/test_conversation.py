"""Reading native conversations: validation with paths, turns, answers and derived receipts."""

from __future__ import annotations

import pytest

from checks.suite import InvalidConversation, parse
from checks.suite.conversation import canonical, validate


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
