"""A conversation that arrives in pieces: over REST, over OTLP in several exports, and with
each model call its own trace (joined to the conversation its input continues)."""

from __future__ import annotations

import base64
import copy
import json
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from checks import review
from checks.ingest import pieces
from checks.models import CheckRun, Conversation, ConversationAlias, Finding, Message, Payload, Refusal, Turn
from checks.suite import conversation

pytestmark = pytest.mark.django_db

USER = {"role": "user", "content": "Where is my order? I ordered a lamp last week."}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id": "ORD-55123"}'},
        }
    ],
}
RESULT_TEXT = '{"order_id": "ORD-55123", "status": "shipped", "tracking": "TRK-20931"}'
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": RESULT_TEXT}
# TRK-77310 is in no result: the evidence checker flags it.
ANSWER = {
    "role": "assistant",
    "content": "Your order ORD-55123 has shipped; the tracking number is TRK-77310.",
}


def native(*messages: dict[str, Any], external_id: str = "order-7") -> dict[str, Any]:
    return {
        "external_id": external_id,
        "agent": {"name": "shop-bot"},
        "turns": [{"messages": list(messages)}],
    }


def decide_the_argument_finding(conversation: Conversation, reviewer: Any) -> Finding:
    """The reviewer confirms the finding on the made-up order id, which holds whatever comes after."""
    finding = Finding.objects.get(conversation=conversation, code="unsupported_argument")
    review.record_decision(finding=finding, reviewer=reviewer, verdict="confirmed", respect_hold=False)
    return finding


def assert_stored_whole(conversation: Conversation) -> None:
    conversation.refresh_from_db()
    (turn,) = Turn.objects.filter(conversation=conversation)
    assert list(Message.objects.filter(turn=turn).order_by("seq").values_list("role", flat=True)) == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert turn.answer == ANSWER["content"]
    (call,) = turn.tool_calls.all()
    assert call.has_result and call.result == RESULT_TEXT


def assert_checked_again_with_the_decision_kept(conversation: Conversation, decided: Finding) -> None:
    runs = CheckRun.objects.filter(conversation=conversation, kind="checks")
    assert runs.count() == 2 and set(runs.values_list("status", flat=True)) == {"done"}
    decided.refresh_from_db()
    assert decided.withdrawn_at is None and decided.status == "confirmed"
    assert decided.decisions.count() == 1
    # The answer the second piece brought is checked: its made-up tracking number is flagged.
    flagged = Finding.objects.get(conversation=conversation, code="unsupported_value")
    assert flagged.value == "trk-77310" and flagged.turn_id == decided.turn_id


# --- over REST ----------------------------------------------------------------------------------


def test_a_last_turn_resent_with_more_messages_is_stored_whole_and_checked_again(
    post_conversation: Callable[..., Any], bob: Any
) -> None:
    assert post_conversation(native(USER, CALL)).status_code == 201
    conversation = Conversation.objects.get()
    decided = decide_the_argument_finding(conversation, bob)
    turn_id = Turn.objects.get().pk

    response = post_conversation(native(USER, CALL, RESULT, ANSWER))

    assert response.status_code == 200 and response.json()["status"] == "appended"
    assert_stored_whole(conversation)
    assert Turn.objects.get().pk == turn_id  # the turn's row, and the findings on it, stay
    assert_checked_again_with_the_decision_kept(conversation, decided)
    assert Payload.objects.filter(conversation=conversation).count() == 2
    # Then a new turn after the grown one appends as before.
    more = native(USER, CALL, RESULT, ANSWER)
    more["turns"].append({"messages": [{"role": "user", "content": "Thanks!"}]})
    assert post_conversation(more).json()["status"] == "appended"
    assert Turn.objects.count() == 2


def test_a_changed_stored_message_is_still_a_conflict(post_conversation: Callable[..., Any]) -> None:
    post_conversation(native(USER, CALL))
    changed = copy.deepcopy(CALL)
    changed["tool_calls"][0]["function"]["arguments"] = '{"order_id": "ORD-1"}'

    response = post_conversation(native(USER, changed, RESULT, ANSWER))

    assert response.status_code == 409
    (error,) = response.json()["errors"]
    assert error["path"] == "$.turns" and "$.turns[0].messages[1]" in error["message"]
    assert Message.objects.count() == 2 and CheckRun.objects.count() == 1


def test_receipts_dropped_from_a_resent_turn_are_a_conflict(post_conversation: Callable[..., Any]) -> None:
    first = native(USER, CALL, RESULT)
    first["turns"][0]["receipts"] = [{"call_id": "call_1", "tool": "get_order", "ok": True}]
    post_conversation(first)

    response = post_conversation(native(USER, CALL, RESULT, ANSWER))

    assert response.status_code == 409
    assert "$.turns[0].receipts" in response.json()["errors"][0]["message"]


# --- over OTLP ----------------------------------------------------------------------------------

SERVICE = [{"key": "service.name", "value": {"stringValue": "shop-bot"}}]


def attribute(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def semconv(message: dict[str, Any]) -> dict[str, Any]:
    """A native message in the GenAI semantic conventions' shape."""
    if message["role"] == "tool":
        return {
            "role": "tool",
            "parts": [
                {"type": "tool_call_response", "id": message["tool_call_id"], "response": message["content"]}
            ],
        }
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for call in message.get("tool_calls") or ():
        parts.append(
            {
                "type": "tool_call",
                "id": call["id"],
                "name": call["function"]["name"],
                "arguments": json.loads(call["function"]["arguments"]),
            }
        )
    return {"role": message["role"], "parts": parts}


def chat_span(trace: str, start: int, inputs: list[dict[str, Any]], output: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": secrets.token_hex(8),
        "name": "chat gpt-4o",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 400),
        "attributes": [
            attribute("gen_ai.operation.name", "chat"),
            attribute("gen_ai.request.model", "gpt-4o"),
            attribute("gen_ai.input.messages", [semconv(m) for m in inputs]),
            attribute("gen_ai.output.messages", [semconv(output)]),
        ],
    }


def tool_span(trace: str, start: int, *, call_id: str = "call_1", error: bool = False) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": secrets.token_hex(8),
        "name": "execute_tool get_order",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 200),
        "attributes": [
            attribute("gen_ai.operation.name", "execute_tool"),
            attribute("gen_ai.tool.name", "get_order"),
            attribute("gen_ai.tool.call.id", call_id),
            attribute("gen_ai.tool.call.result", RESULT_TEXT),
        ],
        "status": {"code": 2} if error else {},
    }


def otlp(*spans: dict[str, Any], service: str = "shop-bot") -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}
        ]
    }


@pytest.fixture
def send(client: Any, api_key: str, django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Sends an OTLP/JSON export (or protobuf) with the project's key; checks run at once."""

    def send_(request: dict[str, Any], *, protobuf: bool = False) -> Any:
        if protobuf:
            body = ParseDict(with_base64_ids(request), ExportTraceServiceRequest()).SerializeToString()
            content_type = "application/x-protobuf"
        else:
            body, content_type = json.dumps(request).encode(), "application/json"
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/v1/traces",
                data=body,
                content_type=content_type,
                headers={"Authorization": f"Bearer {api_key}"},
            )
        assert response.status_code == 200
        if protobuf:
            answer = ExportTraceServiceResponse.FromString(response.content).partial_success
            return {"rejectedSpans": str(answer.rejected_spans), "errorMessage": answer.error_message}
        return response.json().get("partialSuccess", {})

    return send_


def with_base64_ids(request: dict[str, Any]) -> dict[str, Any]:
    """The request as protobuf's JSON mapping writes it: ids (bytes) in base64, not hex."""
    out = copy.deepcopy(request)
    for rs in out["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId"):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return out


def trace_id() -> str:
    return secrets.token_hex(16)


def test_a_second_export_that_extends_the_last_turn_is_stored_whole(
    send: Callable[..., Any], bob: Any
) -> None:
    trace = trace_id()
    # The first model call ends; the tool runs longer than the exporter's delay.
    assert send(otlp(chat_span(trace, 1000, [USER], CALL)), protobuf=True)["rejectedSpans"] == "0"
    conversation = Conversation.objects.get(external_id=trace)
    decided = decide_the_argument_finding(conversation, bob)

    # The tool run and the second model call, whose input adds the tool's result.
    partial = send(
        otlp(tool_span(trace, 1500), chat_span(trace, 2000, [USER, CALL, RESULT], ANSWER)), protobuf=True
    )

    assert partial["rejectedSpans"] == "0"
    assert Conversation.objects.count() == 1
    assert_stored_whole(conversation)
    assert_checked_again_with_the_decision_kept(conversation, decided)
    # The tool span's receipt is kept beside its call.
    receipt = Turn.objects.get().tool_calls.get().receipt
    assert receipt["ok"] is True and receipt["at"]


def test_a_tool_span_exported_alone_joins_its_trace_s_conversation(send: Callable[..., Any]) -> None:
    trace = trace_id()
    send(otlp(chat_span(trace, 1000, [USER], CALL)))
    assert send(otlp(tool_span(trace, 1500, error=True))) == {}

    turn = Turn.objects.get()
    assert list(turn.messages.values_list("role", flat=True)) == ["user", "assistant", "tool"]
    assert turn.tool_calls.get().receipt["ok"] is False
    # The next model call, with the result in its input, grows the same turn.
    assert send(otlp(chat_span(trace, 2000, [USER, CALL, RESULT], ANSWER))) == {}
    assert_stored_whole(Conversation.objects.get())


def test_an_export_that_changes_a_stored_message_is_refused_and_says_so(send: Callable[..., Any]) -> None:
    trace = trace_id()
    send(otlp(chat_span(trace, 1000, [USER], CALL)))
    other_user = {"role": "user", "content": "Cancel my order."}

    partial = send(otlp(chat_span(trace, 2000, [other_user, CALL, RESULT], ANSWER)))

    assert partial["rejectedSpans"] == "1" and "conflict" in partial["errorMessage"]
    assert Message.objects.count() == 2
    assert Refusal.objects.get().reason == partial["errorMessage"]


# --- each model call its own trace ---------------------------------------------------------------


def test_per_call_traces_are_joined_into_one_conversation(send: Callable[..., Any]) -> None:
    first, tool, second = trace_id(), trace_id(), trace_id()
    send(otlp(chat_span(first, 1000, [USER], CALL)))
    assert send(otlp(tool_span(tool, 1500))) == {}
    assert send(otlp(chat_span(second, 2000, [USER, CALL, RESULT], ANSWER))) == {}

    conversation = Conversation.objects.get()
    assert conversation.external_id == first
    assert_stored_whole(conversation)
    assert Turn.objects.get().tool_calls.get().receipt["ok"] is True
    joined = conversation.document["metadata"]["joined"]
    assert joined["count"] == 2
    assert [entry["trace"] for entry in joined["recent"]] == [tool, second]
    assert "call_1" in joined["recent"][0]["by"]
    assert set(ConversationAlias.objects.values_list("external_id", flat=True)) == {tool, second}
    # A later export of a joined trace goes to the same conversation, and changes nothing.
    assert send(otlp(chat_span(second, 2000, [USER, CALL, RESULT], ANSWER))) == {}
    assert Conversation.objects.count() == 1


def test_per_call_traces_in_one_export_are_joined(send: Callable[..., Any]) -> None:
    first, tool, second = trace_id(), trace_id(), trace_id()
    request = otlp(
        chat_span(first, 1000, [USER], CALL),
        tool_span(tool, 1500),
        chat_span(second, 2000, [USER, CALL, RESULT], ANSWER),
    )
    assert send(request) == {}
    assert_stored_whole(Conversation.objects.get(external_id=first))


def test_when_two_stored_conversations_fit_the_call_is_kept_apart(send: Callable[..., Any]) -> None:
    hello = {"role": "assistant", "content": "Hello! How can I help?"}
    greeting = {"role": "user", "content": "Hi"}
    send(otlp(chat_span(trace_id(), 1000, [greeting], hello)))
    send(otlp(chat_span(trace_id(), 1000, [greeting], hello)))  # a templated agent opens alike

    later = trace_id()
    assert send(otlp(chat_span(later, 2000, [greeting, hello, USER], CALL))) == {}

    assert Conversation.objects.count() == 3
    apart = Conversation.objects.get(external_id=later)
    assert "2 or more stored conversations" in apart.document["metadata"]["not_joined"]
    assert not ConversationAlias.objects.exists()


def test_a_conversation_outside_the_window_is_not_joined(send: Callable[..., Any], settings: Any) -> None:
    settings.RECEIPTS_OTLP_JOIN_WINDOW_SECONDS = 600
    send(otlp(chat_span(trace_id(), 1000, [USER], CALL)))
    Conversation.objects.update(updated_at=timezone.now() - timedelta(seconds=601))

    later = trace_id()
    send(otlp(chat_span(later, 2000, [USER, CALL, RESULT], ANSWER)))

    assert Conversation.objects.count() == 2
    assert "joined" not in Conversation.objects.get(external_id=later).document["metadata"]


def test_another_service_s_conversation_is_not_joined(send: Callable[..., Any]) -> None:
    send(otlp(chat_span(trace_id(), 1000, [USER], CALL), service="billing-bot"))
    send(otlp(chat_span(trace_id(), 2000, [USER, CALL, RESULT], ANSWER)))
    assert Conversation.objects.count() == 2


def test_a_tool_span_alone_that_answers_no_stored_call_is_refused_with_why(send: Callable[..., Any]) -> None:
    partial = send(otlp(tool_span(trace_id(), 1500, call_id="call_404")))

    assert partial["rejectedSpans"] == "1"
    assert (
        "call_404" in partial["errorMessage"]
        and "RECEIPTS_OTLP_JOIN_WINDOW_SECONDS" in partial["errorMessage"]
    )
    assert not Conversation.objects.exists()
    refusal = Refusal.objects.get()
    assert refusal.rejected == 1 and refusal.shape["span_names"] == ["execute_tool get_order"]


def test_spans_with_no_genai_content_are_refused_not_answered_as_success(send: Callable[..., Any]) -> None:
    trace = trace_id()
    http = {
        "traceId": trace,
        "spanId": secrets.token_hex(8),
        "name": "GET /orders",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [attribute("http.route", "/orders"), attribute("http.request.method", "GET")],
    }
    db = {**http, "spanId": secrets.token_hex(8), "name": "SELECT orders", "attributes": []}

    partial = send(otlp(http, db))

    assert partial["rejectedSpans"] == "2" and partial["errorMessage"]
    assert not Conversation.objects.exists()
    assert Refusal.objects.get().shape["attribute_keys"] == ["http.request.method", "http.route"]


def test_a_tool_span_beside_a_chat_span_without_content_awaits_its_logs_and_is_not_refused(
    send: Callable[..., Any],
) -> None:
    trace = trace_id()
    chat = chat_span(trace, 1000, [USER], CALL)
    chat["attributes"] = [a for a in chat["attributes"] if not a["key"].endswith("messages")]

    partial = send(otlp(chat, tool_span(trace, 1500)))

    # Its content comes as log records (/v1/logs): a warning, nothing counted as refused.
    assert partial["rejectedSpans"] == "0" and "/v1/logs" in partial["errorMessage"]
    assert not Refusal.objects.exists() and not Conversation.objects.exists()


def test_a_conversation_the_sender_named_is_taken_at_its_word(send: Callable[..., Any]) -> None:
    send(otlp(chat_span(trace_id(), 1000, [USER], CALL)))
    named = chat_span(trace_id(), 2000, [USER, CALL, RESULT], ANSWER)
    named["attributes"].append(attribute("gen_ai.conversation.id", "session-b"))

    assert send(otlp(named)) == {}

    assert Conversation.objects.count() == 2
    assert "joined" not in Conversation.objects.get(external_id="session-b").document["metadata"]


# --- the merge of an export with what is stored, as plain data ----------------------------------


def canonical_of(*turns: list[dict[str, Any]], receipts: list[Any] | None = None) -> dict[str, Any]:
    document = {"external_id": "t", "turns": [{"messages": messages} for messages in turns]}
    if receipts is not None:
        document["turns"][-1]["receipts"] = receipts
    return conversation.canonical(document)


def test_a_merge_keeps_the_stored_receipts_and_fills_in_those_named_only() -> None:
    span_receipt = {
        "call_id": "call_1",
        "tool": "get_order",
        "ok": False,
        "outcome": "error",
        "at": "2026-12-03T10:00:00Z",
    }
    stored = canonical_of([USER, CALL, RESULT], receipts=[span_receipt])
    # The next export's chat span repeats the history; its own tool span is not in it.
    later = canonical_of([USER, CALL, RESULT, ANSWER], receipts=[{"call_id": "call_1", "tool": "get_order"}])

    merged = pieces.merge_with_stored(stored, later)

    assert merged["turns"][0]["messages"] == [
        *stored["turns"][0]["messages"],
        later["turns"][0]["messages"][-1],
    ]
    assert merged["turns"][0]["receipts"] == [span_receipt]
    assert pieces.first_changed_turn(stored, merged) == 0
    assert pieces.merge_with_stored(merged, stored) is merged  # an earlier export arriving late


def test_a_merge_that_would_grow_an_earlier_turn_is_left_to_the_resending_rule() -> None:
    second = [{"role": "user", "content": "And the other one?"}, ANSWER]
    stored = canonical_of([USER, CALL], second)
    grown_earlier = canonical_of([USER, CALL, RESULT], second)

    assert pieces.merge_with_stored(stored, grown_earlier) is grown_earlier
    assert pieces.first_changed_turn(stored, grown_earlier) is None


def test_an_earlier_export_arriving_late_changes_nothing(send: Callable[..., Any]) -> None:
    trace = trace_id()
    first = otlp(chat_span(trace, 1000, [USER], CALL))
    send(otlp(chat_span(trace, 2000, [USER, CALL, RESULT], ANSWER)))

    assert send(first) == {}

    assert_stored_whole(Conversation.objects.get())
    assert CheckRun.objects.filter(kind="checks").count() == 1


def test_a_chat_transcript_posted_after_each_model_call_grows_one_turn(
    post_conversation: Callable[..., Any],
) -> None:
    for sent, status in (
        ([USER, CALL], "created"),
        ([USER, CALL, RESULT], "appended"),
        ([USER, CALL, RESULT, ANSWER], "appended"),
    ):
        response = post_conversation({"external_id": "chat-9", "messages": sent}, query="?format=openai")
        assert response.json()["status"] == status
    assert_stored_whole(Conversation.objects.get())
