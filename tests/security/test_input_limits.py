"""Small bodies that decode into huge or pathological values are refused, fast and by name.

Issue 18: an OTLP export of a million empty spans (2 kB gzipped) decoded into 836 MB of
objects and was answered 200; a bulk body of 17 million ``{}`` lines was parsed whole before
its item count was looked at; a number of more than 4300 digits, or JSON nested 100,000
deep, was a 500. Each is now a 413 or a 400 whose message names the limit and the setting
that moves it, and nothing is stored.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from checks.api import otlp
from checks.ingest import json_input, otel
from checks.models import Conversation, Payload, Project, RawExport
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

PAYLOADS = Path(__file__).resolve().parent.parent / "ingest_payloads"
BULK = "/api/v1/conversations/bulk"
HUGE_NUMBER = "1" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def _refused(response: Any, status: int, *fragments: str) -> None:
    """The answer is `status`, its errors say every fragment, and nothing was stored."""
    assert response.status_code == status, response.content[:500]
    said = json.dumps(response.json())
    for fragment in fragments:
        assert fragment in said, said
    assert not RawExport.objects.exists()
    assert not Conversation.objects.exists()
    assert not Payload.objects.exists()


# --- numbers too long and nesting too deep, on every JSON endpoint ---------------------


def _conversation_with(value: str) -> str:
    return '{"external_id": "x", "metadata": {"v": ' + value + '}, "turns": [{"messages": []}]}'


ENDPOINTS = [
    ("/api/v1/conversations", "application/json", _conversation_with),
    ("/api/v1/check", "application/json", _conversation_with),
    (BULK, "application/json", lambda value: "[" + _conversation_with(value) + "]"),
    (BULK, "application/x-ndjson", _conversation_with),
    ("/v1/traces", "application/json", lambda value: '{"resourceSpans": [], "x": ' + value + "}"),
]


@pytest.mark.parametrize(("path", "content_type", "body_with"), ENDPOINTS)
def test_a_number_of_more_than_4300_digits_is_a_400_naming_it(
    client: Any, api_key: str, path: str, content_type: str, body_with: Any
) -> None:
    response = client.post(
        path,
        data=body_with(HUGE_NUMBER).encode(),
        content_type=content_type,
        headers={"Authorization": f"Bearer {api_key}"},
    )
    _refused(response, 400, "a number has more than 4300 digits")


@pytest.mark.parametrize("value", [DEEP, "[" * 150 + "]" * 150], ids=["100000-deep", "150-deep"])
@pytest.mark.parametrize(("path", "content_type", "body_with"), ENDPOINTS)
def test_json_nested_deeper_than_the_limit_is_a_400_naming_it(
    client: Any, api_key: str, path: str, content_type: str, body_with: Any, value: str
) -> None:
    response = client.post(
        path,
        data=body_with(value).encode(),
        content_type=content_type,
        headers={"Authorization": f"Bearer {api_key}"},
    )
    _refused(response, 400, "nested too deeply: more than 100 levels", "RECEIPTS_JSON_MAX_DEPTH")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (_conversation_with(HUGE_NUMBER), "a number has more than 4300 digits"),
        (_conversation_with(DEEP), "nested too deeply: more than 100 levels (RECEIPTS_JSON_MAX_DEPTH)"),
    ],
)
def test_drf_parsing_a_session_post_is_a_400_too(alice: Any, body: str, fragment: str) -> None:
    # A signed-in POST with a CSRF cookie has DRF parse the body, in the CSRF check.
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get("/login/")
    response = client.post(
        "/api/v1/check",
        data=body.encode(),
        content_type="application/json",
        headers={"X-CSRFToken": client.cookies["csrftoken"].value},
    )
    _refused(response, 400, fragment)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ('{"evidence": {"min_digits": ' + HUGE_NUMBER + "}}", "a number has more than 4300 digits"),
        ('{"evidence": ' + DEEP + "}", "nested too deeply"),
    ],
)
def test_project_options_with_such_json_are_a_400(
    client: Any, alice: Any, project: Project, options: str, fragment: str
) -> None:
    before = project.options
    client.force_login(alice)
    response = client.post(f"/p/{project.slug}/settings", {"options": options})
    assert response.status_code == 400
    assert fragment in response.content.decode()
    project.refresh_from_db()
    assert project.options == before


# --- the reader itself ----------------------------------------------------------------------


def _values(value: Any) -> int:
    """Values as more_values_than counts them: each element and each member, and the outermost."""
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "x,y,[z]{", "b": [1, 2, {"c": "\\"],["}], "d": "\\\\", "e": [ ], "f": {}}',
        '["\\\\\\"", ",", "\\\\", 3, [""], [[]], {"": ""}]',
        "[]",
        "7",
        '"a, b"',
    ],
)
def test_values_are_counted_exactly_outside_strings(text: str) -> None:
    values, raw = _values(json.loads(text)), text.encode()
    assert json_input.more_values_than(raw, values - 1)
    assert not json_input.more_values_than(raw, values)


def test_a_body_of_many_short_strings_is_counted_exactly() -> None:
    raw = b"[" + b'"a,b",' * 3_000_000 + b'""]'  # 3,000,002 values, 6,000,002 commas and brackets
    assert json_input.more_values_than(raw, 1000)
    assert json_input.more_values_than(raw, 3_000_001)
    assert not json_input.more_values_than(raw, 3_000_002)


def test_depth_is_the_levels_of_arrays_and_objects() -> None:
    assert not json_input.deeper_than(json.loads("[" * 100 + "]" * 100), 100)
    assert json_input.deeper_than(json.loads("[" * 101 + "]" * 101), 100)
    assert not json_input.deeper_than({"a": [1, {"b": "c"}]}, 3)
    assert json_input.deeper_than({"a": [1, {"b": []}]}, 3)


# --- bulk JSON Lines ----------------------------------------------------------------------


def _bulk(client: Any, api_key: str, body: bytes, content_type: str = "application/x-ndjson") -> Any:
    return client.post(
        BULK, data=body, content_type=content_type, headers={"Authorization": f"Bearer {api_key}"}
    )


def test_json_lines_are_counted_as_read_and_reading_stops_past_the_limit(
    client: Any, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[str] = []
    loads = json.loads

    def counting(text: Any, *args: Any, **kwargs: Any) -> Any:
        decoded.append(text)
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    body = b"{}\n" * 200_000  # the default limit is 1000 items
    response = _bulk(client, api_key, body)
    monkeypatch.setattr(json, "loads", loads)
    _refused(response, 413, "more than 1000 items", "RECEIPTS_BULK_MAX_ITEMS")
    assert len(decoded) <= 1001  # not one per line of the body


def test_json_lines_past_the_limit_are_refused_whatever_follows(
    client: Any, api_key: str, settings: Any
) -> None:
    settings.RECEIPTS_BULK_MAX_ITEMS = 2
    body = b"{}\n\n{}\r\n{}\n" + b"not json\n" * 1000
    _refused(_bulk(client, api_key, body), 413, "more than 2 items", "RECEIPTS_BULK_MAX_ITEMS")


def test_json_lines_within_the_limit_keep_their_numbers_and_text(client: Any, api_key: str) -> None:
    first = json.dumps(load_example("01"))
    second = load_example("05")
    second["title"] = "a\u2028line separator inside a string"  # JSON allows it raw; it ends no line
    text = "\n\r\n   \n" + first + "\r\n" + json.dumps(second, ensure_ascii=False) + "\n\n"
    response = _bulk(client, api_key, text.encode())
    assert response.status_code == 207, response.content
    assert [i["status"] for i in response.json()["items"]] == ["created", "created"]
    assert sorted(Payload.objects.values_list("body", flat=True)) == sorted(
        [first, json.dumps(second, ensure_ascii=False)]
    )

    bad = (first + "\n\n  {nope\n").encode()
    response = _bulk(client, api_key, bad)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "line 3"


def test_a_bulk_body_with_too_many_values_is_refused_before_decoding(
    client: Any, api_key: str, settings: Any
) -> None:
    settings.RECEIPTS_JSON_MAX_VALUES = 1000
    for body, content_type in [
        (b'{"turns": [' + b"0," * 2000 + b"0]}\n", "application/x-ndjson"),
        (b"[" + b"{}," * 2000 + b"{}]", "application/json"),
    ]:
        _refused(
            _bulk(client, api_key, body, content_type),
            413,
            "more than 1000 JSON values",
            "RECEIPTS_JSON_MAX_VALUES",
        )


# --- OTLP exports in protobuf, written field by field (an empty message is two bytes) -----


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes = b"") -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _export(spans: list[bytes]) -> bytes:
    """ExportTraceServiceRequest{resource_spans{scope_spans{spans…}}}."""
    return _field(1, _field(2, b"".join(_field(2, span) for span in spans)))


def _traces(client: Any, api_key: str, body: bytes, content_type: str, gzipped: bool = True) -> Any:
    headers = {"Authorization": f"Bearer {api_key}"}
    if gzipped:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    return client.post("/v1/traces", data=body, content_type=content_type, headers=headers)


def test_a_million_empty_spans_in_protobuf_are_refused_by_the_span_limit(client: Any, api_key: str) -> None:
    body = _export([b""] * 1_000_000)  # 2 MB, about 2 kB gzipped
    response = _traces(client, api_key, body, "application/x-protobuf")
    _refused(response, 413, "more than 10000 spans", "RECEIPTS_OTLP_MAX_SPANS")


def test_a_million_empty_spans_in_json_are_refused_by_the_span_limit(client: Any, api_key: str) -> None:
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{}] * 1_000_000}]}]}).encode()
    response = _traces(client, api_key, body, "application/json")
    _refused(response, 413, "more than 10000 spans", "RECEIPTS_OTLP_MAX_SPANS")


EMPTY_ATTRIBUTE = _field(9)  # Span.attributes: an empty KeyValue
ARRAY_OF_THREE = _field(9, _field(2, _field(5, _field(1) * 3)))  # KeyValue{value{array_value{3 values}}}


@pytest.mark.parametrize(
    ("spans", "setting", "fragment"),
    [
        ([b""] * 6, "RECEIPTS_OTLP_MAX_SPANS", "more than 5 spans"),
        ([_field(11) * 4, _field(13) * 2], "RECEIPTS_OTLP_MAX_EVENTS", "more than 5 events"),  # events, links
        ([EMPTY_ATTRIBUTE * 6], "RECEIPTS_OTLP_MAX_ATTRIBUTES", "more than 5 attributes"),
        ([EMPTY_ATTRIBUTE * 2, ARRAY_OF_THREE], "RECEIPTS_OTLP_MAX_ATTRIBUTES", "more than 5 attributes"),
        (
            [_field(11, _field(3) * 6)],
            "RECEIPTS_OTLP_MAX_ATTRIBUTES",
            "more than 5 attributes",
        ),  # on an event
    ],
)
def test_each_protobuf_limit_is_counted_and_named(
    client: Any, api_key: str, settings: Any, spans: list[bytes], setting: str, fragment: str
) -> None:
    setattr(settings, setting, 5)
    response = _traces(client, api_key, _export(spans), "application/x-protobuf")
    _refused(response, 413, fragment, setting)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (_field(1, _field(2) * 6), "application/x-protobuf"),  # 1 resource group, 6 scope groups
        (_field(1) * 6, "application/x-protobuf"),
        (json.dumps({"resourceSpans": [{"scopeSpans": [{}] * 6}]}).encode(), "application/json"),
    ],
)
def test_empty_groups_of_spans_are_held_to_the_span_limit(
    client: Any, api_key: str, settings: Any, body: bytes, content_type: str
) -> None:
    settings.RECEIPTS_OTLP_MAX_SPANS = 5
    response = _traces(client, api_key, body, content_type)
    _refused(response, 413, "more than 5 resource and scope groups of spans", "RECEIPTS_OTLP_MAX_SPANS")


def _resource_export(resource: bytes) -> bytes:
    """ExportTraceServiceRequest{resource_spans{resource{…}, scope_spans{one empty span}}}."""
    return _field(1, _field(1, resource) + _field(2, _field(2)))


def test_26_million_empty_entity_references_are_refused_by_the_attribute_limit(
    client: Any, api_key: str
) -> None:
    """Resource.entity_refs went uncounted: 50 kB gzipped that decode into 26 million of
    them cost 10-12 s and about 2 GB, and were answered 200."""
    body = _resource_export(_field(3) * 26_000_000)  # 52 MB, 50 kB gzipped
    response = _traces(client, api_key, body, "application/x-protobuf")
    _refused(response, 413, "more than 200000 attributes", "RECEIPTS_OTLP_MAX_ATTRIBUTES")


ENTITY_REF = _field(2, b"service") + _field(3, b"service.name") + _field(4, b"service.version")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (_resource_export(_field(3, ENTITY_REF) * 2), "application/x-protobuf"),  # 2 refs, 4 keys
        (
            json.dumps(
                {
                    "resourceSpans": [
                        {
                            "resource": {
                                "entityRefs": [{"idKeys": ["a", "b"], "descriptionKeys": ["c"]}] * 2
                            },
                            "scopeSpans": [{"spans": [{}]}],
                        }
                    ]
                }
            ).encode(),
            "application/json",
        ),
    ],
)
def test_entity_references_and_their_keys_count_as_attributes(
    client: Any, api_key: str, settings: Any, body: bytes, content_type: str
) -> None:
    settings.RECEIPTS_OTLP_MAX_ATTRIBUTES = 5
    response = _traces(client, api_key, body, content_type)
    _refused(response, 413, "more than 5 attributes", "RECEIPTS_OTLP_MAX_ATTRIBUTES")


UNKNOWN = _field(99)  # a field no version of the protocol has, empty


@pytest.mark.parametrize(
    "body",
    [
        UNKNOWN * 101,
        _export([UNKNOWN * 101]),  # in a span
        _resource_export(UNKNOWN * 101),
        _export([_field(9, UNKNOWN * 101)]),  # in an attribute
        _export([b"\x30\x01" * 101]),  # Span.kind, a varint, sent 101 times
    ],
    ids=["export", "span", "resource", "attribute", "known-varint"],
)
def test_every_field_read_counts_against_the_field_limit(
    client: Any, api_key: str, settings: Any, body: bytes
) -> None:
    """46 kB gzipped of unknown fields cost 16.6 s of reading tags, answered 200: each field
    the count reads, whatever it holds, now counts."""
    settings.RECEIPTS_OTLP_MAX_FIELDS = 100
    response = _traces(client, api_key, body, "application/x-protobuf")
    _refused(response, 413, "more than 100 protobuf fields", "RECEIPTS_OTLP_MAX_FIELDS")


def test_an_export_at_the_span_event_and_attribute_limits_is_within_the_field_limit(settings: Any) -> None:
    """The field limit's default leaves room for a real export as large as the other
    limits allow: 10,000 spans with every field set, 50,000 events, 200,000 attributes."""
    kv = _field(1, b"gen_ai.request.model") + _field(2, _field(1, b"gpt"))
    span = (
        _field(1, b"t" * 16)
        + _field(2, b"s" * 8)
        + _field(3, b"k=v")
        + _field(4, b"p" * 8)
        + _field(5, b"chat gpt")
        + b"\x30\x03"  # kind
        + b"\x39"
        + b"\x01" * 8  # start_time_unix_nano
        + b"\x41"
        + b"\x02" * 8  # end_time_unix_nano
        + _field(9, kv) * 15
        + _field(11, b"\x09" + b"\x03" * 8 + _field(2, b"gen_ai.choice") + _field(3, kv)) * 5
        + _field(15, _field(2, b"ok") + b"\x18\x01")  # status
        + b"\x85\x01"
        + b"\x01" * 4  # flags
    )
    scope_spans = _field(1, _field(1, b"scope")) + _field(2, span) * 10_000
    body = _field(1, _field(2, scope_spans))
    limits = otlp.limits()
    assert (limits.spans, limits.events, limits.attributes) == (10_000, 50_000, 200_000)
    assert otel.count_protobuf(body, limits) == [10_000, 50_000, 200_000, 2]
    settings.RECEIPTS_OTLP_MAX_FIELDS = 1_000_000
    with pytest.raises(otel.TooLarge, match="more than 1000000 protobuf fields"):
        otel.count_protobuf(body, otlp.limits())


def _json_export(spans: list[dict[str, Any]], resource: list[Any] | None = None) -> bytes:
    rs: dict[str, Any] = {"scopeSpans": [{"spans": spans}]}
    if resource is not None:
        rs["resource"] = {"attributes": resource}
    return json.dumps({"resourceSpans": [rs]}).encode()


NESTED_KVLIST = {
    "key": "k",
    "value": {"kvlistValue": {"values": [{"key": "a", "value": {"arrayValue": {"values": [{}, {}, {}]}}}]}},
}


@pytest.mark.parametrize(
    ("body", "setting", "fragment"),
    [
        (_json_export([{}] * 6), "RECEIPTS_OTLP_MAX_SPANS", "more than 5 spans"),
        (
            _json_export([{"events": [{}] * 4, "links": [{}] * 2}]),
            "RECEIPTS_OTLP_MAX_EVENTS",
            "more than 5 events",
        ),
        (_json_export([{"attributes": [{}] * 6}]), "RECEIPTS_OTLP_MAX_ATTRIBUTES", "more than 5 attributes"),
        (_json_export([{}], resource=[{}] * 6), "RECEIPTS_OTLP_MAX_ATTRIBUTES", "more than 5 attributes"),
        (
            _json_export([{"attributes": [NESTED_KVLIST]}]),
            "RECEIPTS_OTLP_MAX_ATTRIBUTES",
            "more than 4 attributes",
        ),
    ],
)
def test_each_json_limit_is_counted_and_named(
    client: Any, api_key: str, settings: Any, body: bytes, setting: str, fragment: str
) -> None:
    setattr(settings, setting, int(fragment.split()[2]))
    response = _traces(client, api_key, body, "application/json")
    _refused(response, 413, fragment, setting)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_an_export_exactly_at_its_limits_is_taken(
    client: Any, api_key: str, settings: Any, encoding: str
) -> None:
    # The example export holds 4 spans, no events and 41 attributes, in both encodings.
    settings.RECEIPTS_OTLP_MAX_SPANS = 4
    settings.RECEIPTS_OTLP_MAX_EVENTS = 0
    settings.RECEIPTS_OTLP_MAX_ATTRIBUTES = 41
    if encoding == "protobuf":
        body, content_type = (
            gzip.decompress((PAYLOADS / "peer_ingest.otlp.pb.gz").read_bytes()),
            "application/x-protobuf",
        )
    else:
        body, content_type = (PAYLOADS / "peer_ingest.otlp.json").read_bytes(), "application/json"
    assert _traces(client, api_key, body, content_type).status_code == 200
    assert Conversation.objects.count() == 2

    settings.RECEIPTS_OTLP_MAX_ATTRIBUTES = 40
    Conversation.objects.all().delete()
    RawExport.objects.all().delete()
    Payload.objects.all().delete()
    _refused(_traces(client, api_key, body, content_type), 413, "more than 40 attributes")


def test_a_gzip_bomb_is_refused_at_the_decompressed_limit(client: Any, api_key: str, settings: Any) -> None:
    settings.RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES = 1_000_000
    body = gzip.compress(b"\0" * 20_000_000)  # 20 kB that inflate to 20 MB
    response = client.post(
        "/v1/traces",
        data=body,
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {api_key}", "Content-Encoding": "gzip"},
    )
    _refused(
        response, 413, "limit of 1000000 bytes once decompressed", "RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES"
    )


def test_a_body_of_many_gzip_members_is_refused_by_the_member_limit(client: Any, api_key: str) -> None:
    """200,000 empty gzip members in a 4 MB body cost 53 s of CPU, and were answered 200."""
    body = gzip.compress(b"") * 1001  # 20 kB
    response = client.post(
        "/v1/traces",
        data=body,
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {api_key}", "Content-Encoding": "gzip"},
    )
    _refused(
        response, 413, "more than 1000 gzip members", "compress it whole", "RECEIPTS_OTLP_MAX_GZIP_MEMBERS"
    )


def test_an_export_in_a_few_gzip_members_is_read_whole(client: Any, api_key: str) -> None:
    export = gzip.decompress((PAYLOADS / "peer_ingest.otlp.pb.gz").read_bytes())
    third = len(export) // 3 + 1
    body = b"".join(gzip.compress(export[i : i + third]) for i in range(0, len(export), third))
    response = client.post(
        "/v1/traces",
        data=body,
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {api_key}", "Content-Encoding": "gzip"},
    )
    assert response.status_code == 200, response.content
    assert Conversation.objects.count() == 2


def test_what_follows_each_gzip_member_is_never_copied_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the member limit, many members still cost the body's length: the inflater is
    never handed the rest of the body, which it copies back at each member's end."""
    handed: list[int] = []
    decompressobj = zlib.decompressobj

    class Inflater:
        def __init__(self, **kwargs: Any) -> None:
            self.inflater = decompressobj(**kwargs)

        def decompress(self, data: Any, max_length: int = 0) -> bytes:
            handed.append(len(data))
            return self.inflater.decompress(data, max_length)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inflater, name)

    monkeypatch.setattr(otel.zlib, "decompressobj", Inflater)
    body = gzip.compress(b"\n") * 50_000  # 1 MB
    assert otel._gunzip(body, None) == b"\n" * 50_000
    assert max(handed) <= 64 * 1024  # of a body of 1 MB


def test_protobuf_nested_deeper_than_the_limit_is_a_400(client: Any, api_key: str) -> None:
    value = b""
    for _ in range(120):  # AnyValue{array_value{values: AnyValue{…}}}, 240 messages deep
        value = _field(5, _field(1, value))
    body = _export([_field(9, _field(1, b"k") + _field(2, value))])
    response = _traces(client, api_key, body, "application/x-protobuf")
    _refused(response, 400, "nested too deeply: more than 100 levels", "RECEIPTS_JSON_MAX_DEPTH")


def test_otlp_json_nested_100000_deep_is_a_400(client: Any, api_key: str) -> None:
    body = ('{"resourceSpans": [], "x": ' + DEEP + "}").encode()
    response = _traces(client, api_key, body, "application/json", gzipped=False)
    _refused(response, 400, "nested too deeply", "RECEIPTS_JSON_MAX_DEPTH")


def test_otlp_json_with_too_many_values_is_refused_before_decoding(
    client: Any, api_key: str, settings: Any
) -> None:
    settings.RECEIPTS_JSON_MAX_VALUES = 1000
    body = json.dumps({"resourceSpans": [], "pad": [0] * 5000}).encode()
    response = _traces(client, api_key, body, "application/json")
    _refused(response, 413, "more than 1000 JSON values", "RECEIPTS_JSON_MAX_VALUES")
