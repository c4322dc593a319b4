"""What one conversation may hold: its turns, its messages, how deep its tool JSON nests and
how long an assistant's text is; and how long the inline check may take.

Past a limit it is refused with 413 and an error that names the limit and its setting, by
every way in (a POST, bulk, /check), and nothing of it is stored. Within the limits, however
deep the tool JSON (an operator may raise the limit), its check completes. The inline check
stops at its time limit with a 503 that says why, and gives no findings.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.models import CheckRun, Conversation, Payload, RunStatus

pytestmark = pytest.mark.django_db


def _turn(i: int, arguments: str = '{"q": "x"}', result: str = '{"rows": []}') -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": f"Question {i}?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call-{i}",
                        "type": "function",
                        "function": {"name": "search", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"call-{i}", "content": result},
            {"role": "assistant", "content": f"Answer {i}."},
        ]
    }


def _conversation(turns: int, **kwargs: str) -> dict[str, Any]:
    return {"external_id": "big", "turns": [_turn(i, **kwargs) for i in range(turns)]}


def _nested(depth: int) -> str:
    return '{"filters": ' + "[" * depth + '"x"' + "]" * depth + "}"


def _refused(response: Any, setting: str) -> list[dict[str, str]]:
    assert response.status_code == 413, response.content
    body = response.json()
    assert body["errors"], body
    assert all(setting in error["message"] for error in body["errors"]), body
    assert not Conversation.objects.exists()
    assert not Payload.objects.exists()
    assert not CheckRun.objects.exists()
    errors: list[dict[str, str]] = body["errors"]
    return errors


def test_more_turns_than_the_limit_are_refused_and_nothing_is_stored(
    post_conversation: Any, settings: Any
) -> None:
    settings.RECEIPTS_MAX_TURNS = 3
    assert post_conversation(_conversation(3)).status_code == 201
    Conversation.objects.all().delete()
    Payload.objects.all().delete()
    CheckRun.objects.all().delete()

    [error] = _refused(post_conversation(_conversation(4)), "RECEIPTS_MAX_TURNS")
    assert error["path"] == "$.turns"
    assert "4 turns" in error["message"] and "limit of 3" in error["message"]


def test_turns_of_a_flat_message_list_count_too(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_TURNS = 3
    flat = {"external_id": "big", "messages": [m for t in _conversation(5)["turns"] for m in t["messages"]]}
    [error] = _refused(post_conversation(flat), "RECEIPTS_MAX_TURNS")
    assert error["path"] == "$.messages" and "5 turns" in error["message"]


def test_more_messages_than_the_limit_are_refused(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_MESSAGES = 10
    [error] = _refused(post_conversation(_conversation(3)), "RECEIPTS_MAX_MESSAGES")
    assert "12 messages" in error["message"] and "limit of 10" in error["message"]


def test_tool_arguments_nested_past_the_limit_are_refused(post_conversation: Any, settings: Any) -> None:
    """Arguments nested 990 deep were stored, and their check then failed with RecursionError."""
    assert settings.RECEIPTS_MAX_TOOL_JSON_DEPTH == 64  # the documented default
    [error] = _refused(
        post_conversation(_conversation(1, arguments=_nested(990))), "RECEIPTS_MAX_TOOL_JSON_DEPTH"
    )
    assert error["path"] == "$.turns[0].messages[1].tool_calls[0].function.arguments"
    assert "more than 64 levels" in error["message"]


def test_a_tool_result_nested_past_the_limit_is_refused(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_TOOL_JSON_DEPTH = 5
    assert post_conversation(_conversation(1, result=_nested(4))).status_code == 201  # 5 levels
    Conversation.objects.all().delete()
    Payload.objects.all().delete()
    CheckRun.objects.all().delete()
    [error] = _refused(post_conversation(_conversation(1, result=_nested(5))), "RECEIPTS_MAX_TOOL_JSON_DEPTH")
    assert error["path"] == "$.turns[0].messages[2].content"


def test_arguments_sent_as_an_object_count_as_their_json(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_TOOL_JSON_DEPTH = 5
    payload = _conversation(1)
    payload["turns"][0]["messages"][1]["tool_calls"][0]["function"]["arguments"] = json.loads(_nested(5))
    _refused(post_conversation(payload), "RECEIPTS_MAX_TOOL_JSON_DEPTH")


def test_the_inline_check_refuses_what_ingestion_refuses(post_conversation: Any, settings: Any) -> None:
    """For /check the limits are a guard: the check runs in the web process."""
    settings.RECEIPTS_MAX_TURNS = 3
    response = post_conversation(_conversation(4), path="/api/v1/check", query="?store=true")
    _refused(response, "RECEIPTS_MAX_TURNS")
    assert response.json()["detail"] == "The conversation is over a size limit."


def test_a_bulk_item_over_a_limit_is_refused_alone(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_TURNS = 3
    big, small = _conversation(4), {**_conversation(2), "external_id": "small"}
    response = post_conversation([big, small], path="/api/v1/conversations/bulk")
    assert response.status_code == 207
    refused, stored = response.json()["items"]
    assert refused["status"] == "invalid"
    assert "RECEIPTS_MAX_TURNS" in refused["errors"][0]["message"]
    assert stored["status"] == "created"
    assert list(Conversation.objects.values_list("external_id", flat=True)) == ["small"]


def test_tool_json_nested_deep_but_within_a_raised_limit_is_checked(
    post_conversation: Any, settings: Any
) -> None:
    """Stored data within the limits always completes a check: no walker of the suite recurses
    once per level of a call's arguments or a result."""
    settings.RECEIPTS_MAX_TOOL_JSON_DEPTH = 2000
    payload = _conversation(
        2, arguments=_nested(990), result='{"rows": ' + "[" * 990 + '"x"' + "]" * 990 + "}"
    )
    response = post_conversation(payload)
    assert response.status_code == 201, response.content
    run = CheckRun.objects.get(conversation_id=response.json()["id"], kind="checks")
    assert (run.status, run.error) == (RunStatus.DONE, "")


def _answered(answer: str) -> dict[str, Any]:
    payload = _conversation(1)
    payload["turns"][0]["messages"][-1]["content"] = answer
    return payload


def test_an_answer_longer_than_the_limit_is_refused(post_conversation: Any, settings: Any) -> None:
    """An answer is read claim by claim; its length bounds what its check costs."""
    assert settings.RECEIPTS_MAX_ANSWER_BYTES == 128 * 1024  # the documented default
    settings.RECEIPTS_MAX_ANSWER_BYTES = 100
    # Counted in bytes of UTF-8: 50 characters of two bytes each are within the limit.
    assert post_conversation(_answered("\u00e9" * 50)).status_code == 201
    Conversation.objects.all().delete()
    Payload.objects.all().delete()
    CheckRun.objects.all().delete()
    [error] = _refused(post_conversation(_answered("\u00e9" * 51)), "RECEIPTS_MAX_ANSWER_BYTES")
    assert error["path"] == "$.turns[0].messages[3].content"
    assert "102 bytes" in error["message"] and "limit of 100 bytes" in error["message"]


def test_text_between_calls_counts_as_an_answer_does(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_ANSWER_BYTES = 100
    payload = _conversation(1)
    payload["turns"][0]["messages"][1]["content"] = [{"type": "text", "text": "x" * 101}]
    [error] = _refused(post_conversation(payload, path="/api/v1/check"), "RECEIPTS_MAX_ANSWER_BYTES")
    assert error["path"] == "$.turns[0].messages[1].content"


def test_the_inline_check_stops_at_its_time_limit(post_conversation: Any, settings: Any) -> None:
    """An answer of many claims took minutes in the web process; the checkers now observe a
    deadline and the request ends with a 503 that names it, storing nothing."""
    settings.RECEIPTS_INLINE_CHECK_SECONDS = 0.001
    payload = _answered("I've saved " * 3000)
    response = post_conversation(payload, path="/api/v1/check", query="?store=true")
    assert response.status_code == 503, response.content
    body = response.json()
    assert "RECEIPTS_INLINE_CHECK_SECONDS" in body["detail"]
    assert "no findings" in body["detail"]
    assert "findings" not in body
    assert not Conversation.objects.exists()
    # With time enough the same conversation is checked and stored.
    settings.RECEIPTS_INLINE_CHECK_SECONDS = 0
    response = post_conversation(payload, path="/api/v1/check", query="?store=true")
    assert response.status_code == 200
    assert response.json()["stored"]["status"] == "created"


def test_a_stored_check_past_its_time_limit_is_recorded_as_failed(
    post_conversation: Any, settings: Any
) -> None:
    settings.RECEIPTS_CHECK_SECONDS = 0.001
    response = post_conversation(_answered("I've saved " * 3000))
    run = CheckRun.objects.get(conversation_id=response.json()["id"], kind="checks")
    assert run.status == RunStatus.FAILED
    assert "RECEIPTS_CHECK_SECONDS" in run.error
