"""POST /v1/traces: OTLP exports of GenAI spans become checked conversations."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from checks.models import CheckRun, Conversation, Payload, RawExport, Refusal
from tests.otlp_json import attributes, body, span, traces

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).parent / "ingest_payloads"


def _post(client: Any, api_key: str, body: bytes, content_type: str, **headers: str) -> Any:
    return client.post(
        "/v1/traces",
        data=body,
        content_type=content_type,
        headers={"Authorization": f"Bearer {api_key}", **headers},
    )


def test_a_protobuf_export_becomes_checked_conversations(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    body = (PAYLOADS / "peer_ingest.otlp.pb.gz").read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, api_key, body, "application/x-protobuf", **{"Content-Encoding": "gzip"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 0
    assert Conversation.objects.count() == 2
    assert set(CheckRun.objects.values_list("status", flat=True)) == {"done"}
    export = RawExport.objects.get()
    assert bytes(export.body) == body  # kept exactly as received, once for all its conversations
    assert set(Payload.objects.values_list("format", flat=True)) == {"otlp"}


def test_a_json_export_gives_the_same_conversations(client: Any, api_key: str) -> None:
    body = (PAYLOADS / "peer_ingest.otlp.json").read_bytes()
    response = _post(client, api_key, body, "application/json")
    assert response.status_code == 200 and response.json() == {}
    from_json = {c.external_id: c.document for c in Conversation.objects.all()}
    Conversation.objects.all().delete()
    _post(
        client,
        api_key,
        (PAYLOADS / "peer_ingest.otlp.pb.gz").read_bytes(),
        "application/x-protobuf",
        **{"Content-Encoding": "gzip"},
    )
    assert {c.external_id: c.document for c in Conversation.objects.all()} == from_json


def test_sending_the_same_export_again_changes_nothing(client: Any, api_key: str) -> None:
    body = (PAYLOADS / "peer_ingest.otlp.json").read_bytes()
    _post(client, api_key, body, "application/json")
    _post(client, api_key, body, "application/json")
    assert Conversation.objects.count() == 2 and CheckRun.objects.count() == 2


def test_the_conversation_is_found_by_its_conversation_id(client: Any, api_key: str) -> None:
    _post(client, api_key, (PAYLOADS / "peer_ingest.otlp.json").read_bytes(), "application/json")
    external_id = Conversation.objects.order_by("id").first().external_id
    found = client.get(
        f"/api/v1/conversations?external_id={external_id}", headers={"Authorization": f"Bearer {api_key}"}
    ).json()
    assert [c["external_id"] for c in found] == [external_id]


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "fragment"),
    [
        (b"\x00\xffnot protobuf", "application/x-protobuf", "", "protobuf"),
        (b"not gzip", "application/x-protobuf", "gzip", "gzip"),
        (b"{bad json", "application/json", "", "JSON"),
        (b"<xml/>", "text/xml", "", "Content-Type"),
    ],
)
def test_an_undecodable_export_is_400_and_stores_nothing(
    client: Any, api_key: str, body: bytes, content_type: str, encoding: str, fragment: str
) -> None:
    headers = {"Content-Encoding": encoding} if encoding else {}
    response = _post(client, api_key, body, content_type, **headers)
    assert response.status_code == 400
    assert fragment.lower() in response.json()["errors"][0]["message"].lower()
    assert not RawExport.objects.exists() and not Conversation.objects.exists()


def test_an_export_over_the_limit_after_decompression_is_refused(
    client: Any, api_key: str, settings: Any
) -> None:
    settings.RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES = 2000
    body = gzip.compress(json.dumps({"resourceSpans": [], "pad": "x" * 50_000}).encode())
    response = _post(client, api_key, body, "application/json", **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    message = response.json()["errors"][0]["message"]
    assert "limit of 2000 bytes once decompressed" in message
    assert "RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES" in message
    assert not RawExport.objects.exists()


def test_stats_count_received_and_checked(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _post(client, api_key, (PAYLOADS / "peer_ingest.otlp.json").read_bytes(), "application/json")
    stats = client.get("/api/v1/stats", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert stats == {"conversations": 2, "checked": 2, "runs_pending": 0, "exports_waiting": 0}


SPANS = "$.resourceSpans[0].scopeSpans[0].spans[0]"
NUMBER = "@number@"  # where the number under test goes, as the JSON text it is sent as


def _export_with_number(place: str) -> bytes:
    chat = span("t", "chat m", 0, 10, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"})
    chat["events"] = [{"name": "gen_ai.choice", "timeUnixNano": "1"}]
    export = traces([chat])
    if place == "start":
        chat["startTimeUnixNano"] = NUMBER
    elif place == "event":
        chat["events"][0]["timeUnixNano"] = NUMBER
    elif place == "attribute":
        chat["attributes"].append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": NUMBER}})
    else:  # inside an array of a resource attribute
        resource = export["resourceSpans"][0]["resource"]
        resource["attributes"] += attributes({"ports": [80]})
        resource["attributes"][-1]["value"]["arrayValue"]["values"][0]["intValue"] = NUMBER
    return body(export)


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400"])
@pytest.mark.parametrize(
    ("place", "path", "said"),
    [
        ("start", f"{SPANS}.startTimeUnixNano", "which is no time"),
        ("event", f"{SPANS}.events[0].timeUnixNano", "which is no time"),
        ("attribute", f"{SPANS}.attributes[2].value.intValue", "which is no integer"),
        (
            "resource",
            "$.resourceSpans[0].resource.attributes[1].value.arrayValue.values[0].intValue",
            "which is no integer",
        ),
    ],
)
def test_a_time_or_integer_no_integer_holds_is_a_400_naming_it(
    client: Any, api_key: str, number: str, place: str, path: str, said: str
) -> None:
    """JSON reads 1e400 as Infinity, and reading Infinity or NaN as an integer was a 500."""
    data = _export_with_number(place).replace(f'"{NUMBER}"'.encode(), number.encode())
    response = _post(client, api_key, data, "application/json")
    assert response.status_code == 400, response.content
    message = response.json()["errors"][0]["message"]
    assert message.startswith(f"{path} is ") and said in message
    assert "as a string of digits" in message  # the fix
    assert not RawExport.objects.exists() and not Conversation.objects.exists()
    refusal = Refusal.objects.get()
    assert refusal.status_code == 400 and path in refusal.reason


def test_a_double_that_is_not_finite_is_still_taken(client: Any, api_key: str) -> None:
    """A double may be Infinity; nothing reads it as an integer."""
    chat = span("t", "chat m", 0, 10, {"gen_ai.operation.name": "chat"})
    chat["attributes"].append({"key": "gen_ai.request.temperature", "value": {"doubleValue": NUMBER}})
    data = body(traces([chat])).replace(f'"{NUMBER}"'.encode(), b"Infinity")
    assert _post(client, api_key, data, "application/json").status_code == 200


SURROGATE = "@surrogate@"  # where an unpaired surrogate goes, as JSON writes it: "\\ud800"


@pytest.mark.parametrize(
    ("operation", "named_by"),
    [
        ("chat", "gen_ai.conversation.id"),
        ("execute_tool", "gen_ai.conversation.id"),
        ("chat", "the trace id"),
    ],
)
def test_a_conversation_name_holding_an_unpaired_surrogate_is_refused_by_the_partial_success(
    client: Any, api_key: str, operation: str, named_by: str
) -> None:
    """Quoting the name in the partial success could not be encoded, a 500; a lone tool span
    was looked up by it first, a 500 there."""
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hello?"}]}])
    attrs = {
        "gen_ai.operation.name": operation,
        "gen_ai.input.messages": messages,
        "gen_ai.tool.call.id": "c1",
    }
    one = span("t", operation, 0, 10, attrs)
    if named_by == "the trace id":
        one["traceId"] = SURROGATE
    else:
        one["attributes"] += attributes({"gen_ai.conversation.id": SURROGATE})
    data = body(traces([one])).replace(f'"{SURROGATE}"'.encode(), b'"\\ud800"')
    response = _post(client, api_key, data, "application/json")
    assert response.status_code == 200, response.content
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert partial["errorMessage"] == (
        f"\ufffd: its name ({named_by}) holds U+0000 or an unpaired surrogate, which no database "
        "keeps; send it as valid Unicode text"
    )
    assert not Conversation.objects.exists()
    assert Refusal.objects.get().reason == partial["errorMessage"]
