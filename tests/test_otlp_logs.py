"""POST /v1/logs: GenAI events sent as OTLP log records become the conversation of their trace.

The official OpenAI instrumentation writes message content as log records, apart from its
spans: one record per message (`gen_ai.user.message`, …, `gen_ai.choice`) by default, one
`gen_ai.client.inference.operation.details` record per call in its event-only mode. The
records of each span are that chat call; the trace's calls are its conversation, named by
the trace id just as the spans name it, whichever of the two exports comes first.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from checks.ingest import otel, otel_logs
from checks.models import Conversation, Finding, RawExport, Refusal
from tests.otlp_json import (
    ORDER,
    ORDER_TEXT,
    QUESTION,
    SYSTEM,
    WRONG_ANSWER,
    body,
    logs,
    protobuf,
    record,
    span,
    trace_id,
    traces,
)

pytestmark = pytest.mark.django_db

MODEL = "scripted-order-model"
ARGUMENTS = '{"order_id": "A-1001"}'
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": ARGUMENTS}}
# The span ids of the two chat calls, as otlp_json.span names them.
FIRST, SECOND = "loop:chat scripted-order-model:10", "loop:chat scripted-order-model:300"


def post(client: Any, api_key: str, path: str, data: bytes, content_type: str, **headers: str) -> Any:
    return client.post(
        path, data=data, content_type=content_type, headers={"Authorization": f"Bearer {api_key}", **headers}
    )


def event_records(*, event_as_attribute: bool = False) -> list[dict[str, Any]]:
    """The default event mode: one record per message, the content in the body."""
    system = {"gen_ai.system": "openai"}

    def rec(call: str, at: int, event: str, payload: Any) -> dict[str, Any]:
        return record("loop", call, at, event, payload, system, event_as_attribute=event_as_attribute)

    return [
        rec(FIRST, 10, "gen_ai.system.message", {"content": SYSTEM}),
        rec(FIRST, 11, "gen_ai.user.message", {"content": QUESTION}),
        rec(
            FIRST,
            200,
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "tool_calls": [CALL]},
            },
        ),
        rec(SECOND, 300, "gen_ai.system.message", {"content": SYSTEM}),
        rec(SECOND, 301, "gen_ai.user.message", {"content": QUESTION}),
        rec(SECOND, 302, "gen_ai.assistant.message", {"tool_calls": [CALL]}),
        rec(SECOND, 303, "gen_ai.tool.message", {"content": ORDER_TEXT, "id": "call_1"}),
        rec(
            SECOND,
            400,
            "gen_ai.choice",
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": WRONG_ANSWER}},
        ),
    ]


def detail_records() -> list[dict[str, Any]]:
    """The event-only mode: one operation-details record per call, messages as structured values."""
    text = lambda t: {"type": "text", "content": t}  # noqa: E731
    call = {"type": "tool_call", "id": "call_1", "name": "get_order", "arguments": {"order_id": "A-1001"}}
    user = {"role": "user", "parts": [text(QUESTION)]}
    called = {"role": "assistant", "parts": [call]}
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.response.model": MODEL,
        "gen_ai.system_instructions": [text(SYSTEM)],
    }
    details = "gen_ai.client.inference.operation.details"
    return [
        record(
            "loop",
            FIRST,
            200,
            details,
            None,
            {
                **common,
                "gen_ai.input.messages": [user],
                "gen_ai.output.messages": [{**called, "finish_reason": "tool_calls"}],
            },
        ),
        record(
            "loop",
            SECOND,
            400,
            details,
            None,
            {
                **common,
                "gen_ai.input.messages": [
                    user,
                    called,
                    {
                        "role": "tool",
                        "parts": [{"type": "tool_call_response", "id": "call_1", "response": ORDER}],
                    },
                ],
                "gen_ai.output.messages": [
                    {"role": "assistant", "parts": [text(WRONG_ANSWER)], "finish_reason": "stop"}
                ],
            },
        ),
    ]


def chat_spans_without_content() -> dict[str, Any]:
    """The instrumentation's spans when the content goes to log records: no messages."""
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL, "gen_ai.provider.name": "openai"}
    return traces(
        [
            span("loop", "chat scripted-order-model", 10, 200, attrs),
            span("loop", "chat scripted-order-model", 300, 400, attrs),
        ]
    )


def assert_stored_loop(conversation: Conversation) -> None:
    assert conversation.external_id == trace_id("loop")
    messages = [m for turn in conversation.document["turns"] for m in turn["messages"]]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "get_order"
    assert json.loads(messages[3]["content"]) == ORDER
    assert messages[-1]["content"] == WRONG_ANSWER
    codes = set(
        Finding.objects.filter(turn__conversation=conversation).flags().values_list("code", flat=True)
    )
    assert "count_misstatement" in codes


@pytest.mark.parametrize("event_as_attribute", [False, True], ids=["eventName", "event.name attribute"])
def test_message_event_records_become_the_checked_conversation_of_their_trace(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any, event_as_attribute: bool
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = post(
            client,
            api_key,
            "/v1/logs",
            body(logs(event_records(event_as_attribute=event_as_attribute))),
            "application/json",
        )
    assert response.status_code == 200 and response.json() == {}
    assert_stored_loop(Conversation.objects.get())
    assert bytes(RawExport.objects.get().body).startswith(b'{"resourceLogs"')  # kept as received


def test_bodies_sent_as_json_text_are_read_as_their_fields(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    records = event_records()
    for rec in records:
        if "kvlistValue" in rec["body"] and rec.get("eventName") != "gen_ai.user.message":
            fields = {kv["key"]: otel.any_value(kv["value"]) for kv in rec["body"]["kvlistValue"]["values"]}
            rec["body"] = {"stringValue": json.dumps(fields)}
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, api_key, "/v1/logs", body(logs(records)), "application/json")
    assert response.json() == {}
    assert_stored_loop(Conversation.objects.get())


def test_event_only_details_over_gzipped_protobuf_are_stored_and_flagged(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    data = gzip.compress(protobuf(logs(detail_records())))
    with django_capture_on_commit_callbacks(execute=True):
        response = post(
            client, api_key, "/v1/logs", data, "application/x-protobuf", **{"Content-Encoding": "gzip"}
        )
    assert response.status_code == 200 and response["Content-Type"] == "application/x-protobuf"
    assert ExportLogsServiceResponse.FromString(response.content).partial_success.rejected_log_records == 0
    conversation = Conversation.objects.get()
    assert conversation.agent_model == MODEL and conversation.system == SYSTEM
    assert_stored_loop_without_system(conversation)


def assert_stored_loop_without_system(conversation: Conversation) -> None:
    messages = [m for turn in conversation.document["turns"] for m in turn["messages"]]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[-1]["content"] == WRONG_ANSWER
    codes = set(
        Finding.objects.filter(turn__conversation=conversation).flags().values_list("code", flat=True)
    )
    assert "count_misstatement" in codes


@pytest.mark.parametrize("logs_first", [True, False], ids=["logs first", "spans first"])
def test_spans_and_their_log_records_in_either_order_give_one_conversation(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any, logs_first: bool
) -> None:
    sends = [
        ("/v1/logs", protobuf(logs(event_records()))),
        ("/v1/traces", protobuf(chat_spans_without_content())),
    ]
    answers = {}
    for path, data in sends if logs_first else reversed(sends):
        with django_capture_on_commit_callbacks(execute=True):
            answers[path] = post(client, api_key, path, data, "application/x-protobuf")
        assert answers[path].status_code == 200
    assert_stored_loop(Conversation.objects.get())
    assert RawExport.objects.count() == 2  # both kept as received


def test_spans_with_no_content_say_where_it_is_read_from(client: Any, api_key: str) -> None:
    response = post(client, api_key, "/v1/traces", body(chat_spans_without_content()), "application/json")
    partial = response.json()["partialSuccess"]
    assert "/v1/logs" in partial["errorMessage"]
    assert not Conversation.objects.exists()


def test_records_that_are_no_genai_event_are_counted_as_rejected_with_why(client: Any, api_key: str) -> None:
    plain = [
        record("loop", FIRST, 5, "", {"message": "GET /orders 200"}),
        record("", "", 6, "gen_ai.user.message", {"content": QUESTION}),  # no trace to join it to
    ]
    response = post(client, api_key, "/v1/logs", body(logs(event_records() + plain)), "application/json")
    partial = response.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "2"
    assert "not a GenAI event joined to a trace" in partial["errorMessage"]
    assert Conversation.objects.count() == 1  # the GenAI records are still taken


def test_a_refused_log_export_is_kept_for_the_refusals_page_by_its_shape(client: Any, api_key: str) -> None:
    plain = [record("", "", 5, "", {"message": "GET /orders 200"}, {"http.route": "/orders"})]
    post(client, api_key, "/v1/logs", body(logs(plain)), "application/json")
    post(client, api_key, "/v1/logs", b"{bad json", "application/json")
    answered, refused = Refusal.objects.order_by("id")
    assert (answered.endpoint, answered.status_code, answered.rejected) == ("/v1/logs", 200, 1)
    assert "not a GenAI event joined to a trace" in answered.reason
    assert answered.shape["log_records"] == 1 and answered.shape["attribute_keys"] == ["http.route"]
    assert "GET /orders" not in json.dumps(answered.shape)  # the shape, never the content
    assert refused.status_code == 400 and "not an OTLP logs export" in refused.reason


def test_records_with_no_content_are_refused_with_a_reason_and_nothing_stored(
    client: Any, api_key: str
) -> None:
    empty = [
        record("loop", FIRST, 10, "gen_ai.user.message", {}),
        record(
            "loop",
            FIRST,
            200,
            "gen_ai.choice",
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant"}},
        ),
    ]
    response = post(client, api_key, "/v1/logs", protobuf(logs(empty)), "application/x-protobuf")
    partial = ExportLogsServiceResponse.FromString(response.content).partial_success
    assert partial.rejected_log_records == 2
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in partial.error_message
    assert not Conversation.objects.exists()


@pytest.mark.parametrize(
    ("data", "content_type", "encoding", "fragment"),
    [
        (b"\x00\xffnot protobuf", "application/x-protobuf", "", "ExportLogsServiceRequest"),
        (b"not gzip", "application/json", "gzip", "gzip"),
        (b"[1, 2]", "application/json", "", "resourceLogs"),
        (
            b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [7]}]}]}',
            "application/json",
            "",
            "logRecords[0]",
        ),
    ],
)
def test_an_undecodable_log_export_is_400_naming_the_fault(
    client: Any, api_key: str, data: bytes, content_type: str, encoding: str, fragment: str
) -> None:
    headers = {"Content-Encoding": encoding} if encoding else {}
    response = post(client, api_key, "/v1/logs", data, content_type, **headers)
    assert response.status_code == 400
    assert response.json()["detail"] == "The body is not an OTLP logs export."
    assert fragment in response.json()["errors"][0]["message"]
    assert not RawExport.objects.exists()


def test_a_log_export_over_the_record_limit_is_413_naming_the_setting(
    client: Any, api_key: str, settings: Any
) -> None:
    settings.RECEIPTS_OTLP_MAX_SPANS = 3
    for data, content_type in (
        (protobuf(logs(event_records())), "application/x-protobuf"),
        (body(logs(event_records())), "application/json"),
    ):
        response = post(client, api_key, "/v1/logs", data, content_type)
        assert response.status_code == 413
        message = response.json()["errors"][0]["message"]
        assert "more than 3 log records" in message and "RECEIPTS_OTLP_MAX_SPANS" in message
    assert not RawExport.objects.exists()


def test_a_log_export_over_the_body_limit_is_413_and_kept_as_refused(
    client: Any, api_key: str, settings: Any
) -> None:
    data = body(logs(event_records()))
    settings.RECEIPTS_BULK_MAX_BYTES = len(data) - 1
    response = post(client, api_key, "/v1/logs", data, "application/json")
    assert response.status_code == 413 and "RECEIPTS_BULK_MAX_BYTES" in response.json()["detail"]
    refusal = Refusal.objects.get()
    assert refusal.status_code == 413 and refusal.endpoint == "/v1/logs"
    assert refusal.shape["bytes"] == len(data)
    assert not RawExport.objects.exists()


def test_logs_need_a_project_key_with_the_ingest_scope(client: Any) -> None:
    response = client.post("/v1/logs", data=body(logs(event_records())), content_type="application/json")
    assert response.status_code in (401, 403)
    assert not Conversation.objects.exists()


def test_the_schema_documents_the_logs_endpoint(client: Any) -> None:
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    operation = schema["paths"]["/v1/logs"]["post"]
    assert operation["operationId"] == "otlp_logs"
    assert set(operation["requestBody"]["content"]) == {"application/x-protobuf", "application/json"}


RECORDS = "$.resourceLogs[0].scopeLogs[0].logRecords"


@pytest.mark.parametrize("number", ["Infinity", "1e400"])
@pytest.mark.parametrize(
    ("place", "path", "said"),
    [
        ("timeUnixNano", f"{RECORDS}[1].timeUnixNano", "which is no time"),
        ("observedTimeUnixNano", f"{RECORDS}[1].observedTimeUnixNano", "which is no time"),
        ("attribute", f"{RECORDS}[1].attributes[1].value.intValue", "which is no integer"),
        ("body", f"{RECORDS}[1].body.kvlistValue.values[1].value.intValue", "which is no integer"),
    ],
)
def test_a_time_or_integer_no_integer_holds_is_a_400_naming_it(
    client: Any, api_key: str, number: str, place: str, path: str, said: str
) -> None:
    """JSON reads 1e400 as Infinity, and reading Infinity as an integer was a 500."""
    records = event_records()
    second = records[1]
    if place == "attribute":
        second["attributes"].append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": "@@"}})
    elif place == "body":
        second["body"]["kvlistValue"]["values"].append({"key": "tokens", "value": {"intValue": "@@"}})
    else:
        second[place] = "@@"
    data = body(logs(records)).replace(b'"@@"', number.encode())
    response = post(client, api_key, "/v1/logs", data, "application/json")
    assert response.status_code == 400, response.content
    message = response.json()["errors"][0]["message"]
    assert message.startswith(f"{path} is ") and said in message and "as a string of digits" in message
    assert not RawExport.objects.exists() and not Conversation.objects.exists()
    assert Refusal.objects.get().status_code == 400


@pytest.mark.parametrize("encoding", ["application/json", "application/x-protobuf"])
@pytest.mark.parametrize(
    ("path", "sent", "expected", "right"),
    [("/v1/traces", "logs", "trace", "/v1/logs"), ("/v1/logs", "trace", "logs", "/v1/traces")],
)
def test_an_export_sent_to_the_other_signals_endpoint_is_refused_naming_the_right_one(
    client: Any, api_key: str, encoding: str, path: str, sent: str, expected: str, right: str
) -> None:
    """Either was answered 200 and nothing was stored, or (protobuf) a 400 about its framing."""
    export = logs(event_records()) if sent == "logs" else chat_spans_without_content()
    data = body(export) if encoding == "application/json" else protobuf(export)
    response = post(client, api_key, path, data, encoding)
    assert response.status_code == 400, response.content
    assert response.json()["detail"] == (
        f"The body is an OTLP {sent} export, not a {expected} export: send it to {right}."
    )
    assert f"send it to {right}" in response.json()["errors"][0]["message"]
    assert not RawExport.objects.exists() and not Conversation.objects.exists()
    refusal = Refusal.objects.get()  # kept for the Refusals page, as every refusal is
    assert (refusal.endpoint, refusal.status_code) == (path, 400) and right in refusal.reason


EMPTY_GROUP = b"\x0a\x00"  # one empty resource group: the same bytes in either signal


@pytest.mark.parametrize("path", ["/v1/traces", "/v1/logs"])
@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b"{}", "application/json"),
        (b'{"resourceSpans": []}', "application/json"),
        (b'{"resourceLogs": []}', "application/json"),
        (EMPTY_GROUP, "application/x-protobuf"),
    ],
)
def test_an_empty_export_is_taken_by_either_endpoint_unless_it_names_the_other(
    client: Any, api_key: str, path: str, data: bytes, content_type: str
) -> None:
    """The OTLP specification has an empty export succeed; only one that says it is the other
    signal's (its top-level field, in JSON) is refused."""
    response = post(client, api_key, path, data, content_type)
    other = b"resourceLogs" if path == "/v1/traces" else b"resourceSpans"
    if other in data:
        assert response.status_code == 400
    else:
        assert response.status_code == 200, response.content
        assert not Refusal.objects.exists()


def test_a_span_and_a_log_record_with_every_field_set_are_each_read_as_their_own_signal() -> None:
    """What tells them apart is a field both have, of another wire type in each: no field of
    one's own message is taken for the other's."""
    traces_request = ExportTraceServiceRequest()
    one = traces_request.resource_spans.add().scope_spans.add().spans.add()
    for number, field in one.DESCRIPTOR.fields_by_number.items():
        if field.message_type is None:
            setattr(one, field.name, {str: "x", bytes: b"\x01"}.get(type(getattr(one, field.name)), number))
    one.attributes.add(key="k").value.int_value = 1
    one.events.add(name="e", time_unix_nano=1, dropped_attributes_count=1)
    one.links.add(trace_id=b"\x01", span_id=b"\x02", trace_state="x", flags=1, dropped_attributes_count=1)
    one.status.code = 2
    logs_request = ExportLogsServiceRequest()
    record = logs_request.resource_logs.add().scope_logs.add().log_records.add()
    for number, field in record.DESCRIPTOR.fields_by_number.items():
        if field.message_type is None:
            setattr(
                record, field.name, {str: "x", bytes: b"\x01"}.get(type(getattr(record, field.name)), number)
            )
    record.attributes.add(key="k").value.int_value = 1
    record.body.string_value = "x"

    as_traces, as_logs = traces_request.SerializeToString(), logs_request.SerializeToString()
    assert otel.count_protobuf(as_traces, otel.Limits())[0] == 1
    assert otel.count_protobuf(as_logs, otel.Limits(), otel_logs._EXPORT, otel_logs.REQUEST)[0] == 1
    with pytest.raises(otel.WrongSignal, match="send it to /v1/logs"):
        otel.count_protobuf(as_logs, otel.Limits())
    with pytest.raises(otel.WrongSignal, match="send it to /v1/traces"):
        otel.count_protobuf(as_traces, otel.Limits(), otel_logs._EXPORT, foreign=otel.TRACES_ENDPOINT)
