"""OTLP/HTTP traces (`POST /v1/traces`) read as native conversations.

Two steps, each usable alone:

- ``decode_request`` turns the body into the OTLP/JSON shape (camelCase keys, hex ids,
  ``{"stringValue": …}`` attribute values), whether it came as protobuf
  (``application/x-protobuf``) or JSON (``application/json``), gzipped or not, and raises
  ``BadOtlp`` with a message that says what is wrong when it cannot, and ``TooLarge`` (a
  BadOtlp) for an export over its ``Limits``: spans, events and attributes are counted
  before the export is built into objects, so a small body that would decode into millions
  of them is refused at the cost of its size, not theirs; ``screen_request`` makes the same
  refusals at a request's cost (a protobuf export is walked, not built), for the endpoint
  that answers before a worker decodes what it stored;
- ``conversations_from_spans`` reads the GenAI spans of a decoded request (OpenTelemetry
  GenAI semantic conventions) as native conversations.

Other conventions are read by first giving each span the GenAI attributes they mean
(``with_conventions``): OpenInference (``openinference``), OpenLLMetry's legacy attributes
(``otel_legacy``) and GenAI events on the span (``otel_events``); log records of GenAI
events become chat spans of their own (``otel_logs``) and are read by ``read_spans`` too.
Whatever gives no conversation is listed in ``Reading.skipped`` with the reason.

How spans become a conversation:

- spans are grouped by ``gen_ai.conversation.id``; a span without one joins the
  conversation named by another span of its trace, else its trace (hex id) names it. That
  name is the conversation's ``external_id``;
- the messages are the latest chat span's ``gen_ai.input.messages`` followed by its
  ``gen_ai.output.messages``: a chat call's input carries the history, so a later export of
  the same conversation repeats the earlier turns and adds its own;
- each ``execute_tool`` span is the runtime's receipt for its ``gen_ai.tool.call.id``
  (``ok`` unless the span's status is ERROR; counts and emptiness are left for the
  transcript to fill in), and supplies the tool message from ``gen_ai.tool.call.result``
  when the messages carry no response for that call;
- a tool message whose id answers no waiting call, and a tool span whose call id matches
  none (or that has none), is paired with a call of the same tool, in order
  (``call_pairing``), and ``metadata.pairing`` says so;
- ``agent.model`` is the latest chat span's response (else request) model, ``agent.name``
  ``gen_ai.agent.name`` (else the resource's ``service.name``), ``system`` the
  ``gen_ai.system_instructions``, each turn's ``tools_offered`` the
  ``gen_ai.tool.definitions`` when recorded, and ``started_at`` the earliest span start.

Exporters send each span once, so the spans of one conversation may arrive in several
requests; ``checks.ingest.pieces`` reads a later export as an extension of what is stored.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from checks.suite.conversation import split_into_turns
from checks.suite.pairing import answered_in_json, by_occurrence

from . import call_pairing, content_blocks, json_input, openinference, otel_events, otel_legacy, repr_calls
from .common import native_role, offered_tool, result_text, tool_call

PROTOBUF = ("application/x-protobuf", "application/protobuf")
JSON = ("application/json",)
STATUS_ERROR = 2
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


class BadOtlp(ValueError):
    """The body is not an OTLP trace export this reader can decode; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TooLarge(BadOtlp):
    """The export is over one of its limits: ``what`` names which (a field of ``Limits``)."""

    def __init__(self, message: str, what: str, limit: int) -> None:
        super().__init__(message)
        self.what = what
        self.limit = limit


class TooDeep(BadOtlp):
    """The export nests deeper than ``Limits.depth``."""


class Endpoint(NamedTuple):
    """Where the exports of one signal are sent: the path, the top-level field of their
    OTLP/JSON (camel and snake case), and what their records are called."""

    signal: str
    path: str
    field: tuple[str, str]
    records: str


TRACES_ENDPOINT = Endpoint("trace", "/v1/traces", ("resourceSpans", "resource_spans"), "spans")
LOGS_ENDPOINT = Endpoint("logs", "/v1/logs", ("resourceLogs", "resource_logs"), "log records")


class WrongSignal(BadOtlp):
    """The body is an export of another signal (``signal``: "trace", "logs"), sent to the
    endpoint of this one; ``endpoint`` is where it belongs."""

    def __init__(self, message: str, signal: str, endpoint: str) -> None:
        super().__init__(message)
        self.signal = signal
        self.endpoint = endpoint


@dataclass(frozen=True)
class Limits:
    """How much one export may hold; None is no limit.

    ``spans`` counts every span, and holds the resource and scope groups of spans to the
    same number; ``events`` every span event and span link; ``attributes`` every attribute
    of a resource, scope, span, event or link, every value inside an attribute's array or
    key-value list, and every entity reference of a resource and key it names. ``depth``
    bounds how deep the export nests (JSON arrays and objects, protobuf messages),
    ``json_values`` how many values an OTLP/JSON body holds
    (``json_input.more_values_than``), ``fields`` how many fields of a protobuf export are
    read to count the rest (known or not), ``bytes`` the body once decompressed, and
    ``gzip_members`` how many gzip members (streams one after another) a gzipped body is.
    """

    spans: int | None = None
    events: int | None = None
    attributes: int | None = None
    depth: int = json_input.MAX_DEPTH
    json_values: int | None = None
    fields: int | None = None
    bytes: int | None = None
    gzip_members: int | None = None


# --- decoding ------------------------------------------------------------------------------


def decode_request(
    body: bytes,
    content_type: str,
    content_encoding: str = "",
    *,
    max_bytes: int | None = None,
    limits: Limits | None = None,
    signal: Signal | None = None,
) -> dict[str, Any]:
    """An OTLP/HTTP trace export as a dict in the OTLP/JSON shape, or BadOtlp.

    `max_bytes` bounds the body once decompressed (None: no bound), as ``limits.bytes`` does.
    ``signal`` reads another signal's export (``otel_logs.LOGS``) with the same framing.
    """
    signal = signal or TRACES
    limits = limits or Limits()
    if max_bytes is not None and (limits.bytes is None or max_bytes < limits.bytes):
        limits = replace(limits, bytes=max_bytes)
    body = inflate(body, content_encoding, limits)
    media = _media(content_type)
    if media in PROTOBUF:
        return signal.protobuf(body, limits)
    if media in JSON:
        return signal.json(body, limits)
    raise _not_an_encoding(content_type)


def screen_request(
    body: bytes,
    content_type: str,
    content_encoding: str = "",
    *,
    limits: Limits | None = None,
    signal: Signal | None = None,
) -> int:
    """How many records (spans, or log records) an export holds, once the checks that must
    answer the sender at once have passed; the same BadOtlp, TooLarge, TooDeep and
    WrongSignal ``decode_request`` raises for them.

    What a request can afford before it answers: the encoding, the body inflated in bounded
    pieces (its size and gzip members), the framing and the counting limits. A protobuf
    export is walked on the wire (``count_protobuf``), never built into objects, which is
    the work a worker does later; an OTLP/JSON one is parsed and checked as
    ``decode_request`` does, since JSON cannot be counted or told from the other signal
    without parsing it. What only building the export finds (a string that is not UTF-8,
    say) is found by the worker, and kept as a refusal with the reason.
    """
    signal = signal or TRACES
    limits = limits or Limits()
    body = inflate(body, content_encoding, limits)
    media = _media(content_type)
    if media in PROTOBUF:
        return signal.walk(body, limits)[SPANS]
    if media in JSON:
        return signal.records(signal.json(body, limits))
    raise _not_an_encoding(content_type)


def inflate(body: bytes, content_encoding: str, limits: Limits) -> bytes:
    """The body as the export it encodes: gunzipped when gzip (``_gunzip``), held to
    ``limits.bytes``; BadOtlp for an encoding other than gzip or none."""
    encoding = (content_encoding or "").strip().lower()
    if encoding == "gzip":
        body = _gunzip(body, limits.bytes, limits.gzip_members)
    elif encoding not in ("", "identity"):
        raise BadOtlp(f"Content-Encoding {content_encoding!r} is not supported; send gzip or no encoding")
    if limits.bytes is not None and len(body) > limits.bytes:
        raise TooLarge(f"the body is over the limit of {limits.bytes} bytes", "bytes", limits.bytes)
    return body


def _media(content_type: str) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _not_an_encoding(content_type: str) -> BadOtlp:
    return BadOtlp(
        f"Content-Type {content_type!r} is not an OTLP encoding; send application/x-protobuf "
        "or application/json"
    )


# How much of a gzipped body the inflater is given at a time: what it hands back after a
# member's end is a copy of the rest of what it was given, so this bounds that copy, while
# a 50 MB body still takes only a few thousand calls.
GZIP_PIECE = 16 * 1024


def _gunzip(body: bytes, max_bytes: int | None, max_members: int | None = None) -> bytes:
    """The body inflated a bounded piece at a time: never more than ``max_bytes`` + 1 held.

    A gzip body may be several members one after another (RFC 1952), each counted against
    ``max_members``. Given the whole rest of the body after each member, as it once was, the
    inflater copied megabytes per member: 200,000 empty members in 4 MB cost 10 s and more.
    """
    out = bytearray()
    view = memoryview(body)
    pos, members = 0, 0
    try:
        while True:
            members += 1
            if max_members is not None and members > max_members:
                raise TooLarge(
                    f"the body is more than {max_members} gzip members one after another; "
                    "compress it whole, as one",
                    "gzip_members",
                    max_members,
                )
            inflater = zlib.decompressobj(wbits=31)  # gzip framing
            while not inflater.eof:
                if pos >= len(view):
                    raise BadOtlp("the body is not valid gzip (Content-Encoding: gzip): it ends too soon")
                piece = view[pos : pos + GZIP_PIECE]
                pos += len(piece)
                limit = 0 if max_bytes is None else max_bytes + 1 - len(out)
                out += inflater.decompress(piece, limit)
                if max_bytes is not None and len(out) > max_bytes:
                    raise TooLarge(
                        f"the body is over the limit of {max_bytes} bytes once decompressed",
                        "bytes",
                        max_bytes,
                    )
            pos -= len(inflater.unused_data)  # the start of the next member, if any
            if pos >= len(view):
                return bytes(out)
    except zlib.error as exc:
        raise BadOtlp(f"the body is not valid gzip (Content-Encoding: gzip): {exc}") from None


class _Counter:
    """Spans, events, attributes and groups of spans (resource spans, scope spans: each
    costs what a span does, and as many may come) counted against their limits as an
    export is read; the groups are held to the span limit. A log export counts its log
    records as spans (``noun`` names them)."""

    NAMES = ("spans", "events", "attributes", "groups")

    def __init__(self, limits: Limits, noun: str = "spans") -> None:
        self.noun = noun
        self.counts = [0, 0, 0, 0]
        self.caps = [
            sys.maxsize if cap is None else cap
            for cap in (limits.spans, limits.events, limits.attributes, limits.spans)
        ]
        self.fields = sys.maxsize if limits.fields is None else limits.fields

    def add(self, kind: int, n: int = 1) -> None:
        self.counts[kind] += n
        if self.counts[kind] > self.caps[kind]:
            self.over(kind)

    def over(self, kind: int) -> None:
        name, cap = self.NAMES[kind], self.caps[kind]
        what = {"groups": f"resource and scope groups of {self.noun}", "spans": self.noun}.get(name, name)
        raise TooLarge(f"the export holds more than {cap} {what}", name, cap)

    def too_many_fields(self) -> TooLarge:
        return TooLarge(f"the export holds more than {self.fields} protobuf fields", "fields", self.fields)


SPANS, EVENTS, ATTRIBUTES, GROUPS = 0, 1, 2, 3
NOTHING = -1
FOREIGN = -2  # a field of the other signal's message (see _LOG_RECORD_FIELDS)

# The protobuf messages of an export, as what their length-delimited fields hold: by tag
# (field number << 3 | 2), what the field counts as and the message inside it (None: a
# string or bytes). Other fields, those of a newer version of the protocol included, are
# skipped by their length, never looked into. Every repeated field of a message the
# decoder builds is here: each of its elements becomes an object, so each is counted.
# opentelemetry/proto/{collector/trace,trace,resource,common}/v1.
_ANY_VALUE: dict[int, tuple[int, Any]] = {}
_KEY_VALUE = {2 << 3 | 2: (NOTHING, _ANY_VALUE)}  # KeyValue.value
_ANY_VALUE.update(
    {
        5 << 3 | 2: (NOTHING, {1 << 3 | 2: (ATTRIBUTES, _ANY_VALUE)}),  # array_value.values
        6 << 3 | 2: (NOTHING, {1 << 3 | 2: (ATTRIBUTES, _KEY_VALUE)}),  # kvlist_value.values
    }
)
_EVENT = {3 << 3 | 2: (ATTRIBUTES, _KEY_VALUE)}
_LINK = {4 << 3 | 2: (ATTRIBUTES, _KEY_VALUE)}
_SPAN: dict[int, tuple[int, Any]] = {
    9 << 3 | 2: (ATTRIBUTES, _KEY_VALUE),
    11 << 3 | 2: (EVENTS, _EVENT),
    13 << 3 | 2: (EVENTS, _LINK),
}
# A log export and a trace export frame their records alike (field 1 of the request, 2 of
# each group, 2 of each scope's), so a log export sent here reads as one of spans, and
# decodes into spans of nothing. What tells a LogRecord from a Span is its fields: those
# numbers both messages have, but of another wire type in each. A span never holds one, not
# even a span of a newer OTLP (no message changes the type of a field it has), so a span
# holding one is a log record: time_unix_nano (1, fixed64), severity_number (2, varint),
# attributes (6, bytes), dropped_attributes_count (7, varint), flags (8, fixed32), span_id
# (10, bytes), observed_time_unix_nano (11, fixed64), event_name (12, bytes). Protobuf
# encoders write fields in number order, so a record shows one before its trace_id (9),
# which a span's walk would read as an attribute. A record with none of these (only its
# severity_text, body or trace_id) cannot be told from a span, and is read as one.
_LOG_RECORD_FIELDS = (
    1 << 3 | 1,
    2 << 3 | 0,
    6 << 3 | 2,
    7 << 3 | 0,
    8 << 3 | 5,
    10 << 3 | 2,
    11 << 3 | 1,
    12 << 3 | 2,
)
_SPAN.update(dict.fromkeys(_LOG_RECORD_FIELDS, (FOREIGN, None)))
_SCOPE = {3 << 3 | 2: (ATTRIBUTES, _KEY_VALUE)}
_SCOPE_SPANS = {1 << 3 | 2: (NOTHING, _SCOPE), 2 << 3 | 2: (SPANS, _SPAN)}
# EntityRef.id_keys and description_keys: each names an attribute of the resource.
_ENTITY_REF = {3 << 3 | 2: (ATTRIBUTES, None), 4 << 3 | 2: (ATTRIBUTES, None)}
_RESOURCE = {1 << 3 | 2: (ATTRIBUTES, _KEY_VALUE), 3 << 3 | 2: (ATTRIBUTES, _ENTITY_REF)}  # entity_refs
_RESOURCE_SPANS = {1 << 3 | 2: (NOTHING, _RESOURCE), 2 << 3 | 2: (GROUPS, _SCOPE_SPANS)}
_EXPORT = {1 << 3 | 2: (GROUPS, _RESOURCE_SPANS)}


def count_protobuf(
    body: bytes,
    limits: Limits,
    export: dict[int, tuple[int, Any]] | None = None,
    request: str = "ExportTraceServiceRequest",
    noun: str = "spans",
    foreign: Endpoint = LOGS_ENDPOINT,
) -> list[int]:
    """[spans, events, attributes, groups] of a protobuf export, read from its wire format without
    decoding it; TooLarge as soon as one is over its limit, BadOtlp when the framing is bad.

    Decoding builds an object for every span, event and attribute, empty or not, and an
    empty one is two bytes on the wire: this walk is what keeps a small body from becoming
    gigabytes of them. It reads tags and lengths only, and stops at the first count over.
    Each field it reads, whatever it holds, counts against ``limits.fields``: a body of
    millions of fields it skips (26 million empty entity references, or of an unknown field,
    in 50 kB gzipped) would otherwise cost seconds of this walk alone.
    ``export`` is the message tree of another signal's request (named ``request``), and
    ``foreign`` the signal whose fields it marks FOREIGN: WrongSignal at the first.
    """
    counter = _Counter(limits, noun)
    try:
        _walk(memoryview(body), 0, len(body), export or _EXPORT, counter, 1, limits.depth, counter.fields)
    except IndexError:
        raise BadOtlp(_not_protobuf("it ends in the middle of a field", request)) from None
    except _BadFraming as exc:
        raise BadOtlp(_not_protobuf(str(exc), request)) from None
    except _Foreign as exc:
        raise WrongSignal(
            f"the body is an OTLP {foreign.signal} export, not an {request}: its {noun} hold field "
            f"{exc.tag >> 3} with wire type {exc.tag & 7}, as {foreign.records} do; "
            f"send it to {foreign.path}",
            foreign.signal,
            foreign.path,
        ) from None
    return counter.counts


class _BadFraming(Exception):
    """The wire format is broken; the message says where."""


class _Foreign(Exception):
    """A field of the other signal's message, by its tag."""

    def __init__(self, tag: int) -> None:
        super().__init__(tag)
        self.tag = tag


def _walk(
    buf: memoryview,
    pos: int,
    end: int,
    message: dict[int, tuple[int, Any]],
    counter: _Counter,
    depth: int,
    max_depth: int,
    fields_left: int,
) -> int:
    """Counts the fields of one message (``buf[pos:end]``) and of those inside it that
    ``message`` names; the fields still allowed after them."""
    if depth > max_depth:
        raise TooDeep(f"the export is nested too deeply: more than {max_depth} levels")
    while pos < end:
        fields_left -= 1
        if fields_left < 0:
            raise counter.too_many_fields()
        tag = buf[pos]
        pos += 1
        if tag & 0x80:
            tag, pos = _varint(buf, pos, tag)
        inside = message.get(tag)
        if inside is not None and inside[0] == FOREIGN:
            raise _Foreign(tag)
        wire = tag & 7
        if wire == 2:
            size = buf[pos]
            pos += 1
            if size & 0x80:
                size, pos = _varint(buf, pos, size)
            stop = pos + size
            if stop > end:
                raise _BadFraming("a field is longer than what holds it")
            if inside is not None:
                kind, fields = inside
                if kind != NOTHING:
                    counter.add(kind)
                if size and fields:
                    fields_left = _walk(buf, pos, stop, fields, counter, depth + 1, max_depth, fields_left)
            pos = stop
        elif wire == 0:
            _, pos = _varint(buf, pos, 0x80)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise _BadFraming(f"wire type {wire} has no place in an export")
    if pos != end:
        raise _BadFraming("a field runs past the end of what holds it")
    return fields_left


def _varint(buf: memoryview, pos: int, first: int) -> tuple[int, int]:
    """The varint whose first byte (``first``, already read, continuation bit set) came
    before ``pos``; with the position after it. At most ten bytes, as protobuf allows."""
    value, shift = first & 0x7F, 7
    for _ in range(9):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise _BadFraming("a varint is longer than ten bytes")


def _not_protobuf(why: str, request: str = "ExportTraceServiceRequest") -> str:
    return f"the body is not an OTLP {request} in protobuf (Content-Type: application/x-protobuf): {why}"


def _decode_protobuf(body: bytes, limits: Limits | None = None) -> dict[str, Any]:
    count_protobuf(body, limits or Limits())
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except (DecodeError, ValueError) as exc:
        raise BadOtlp(_not_protobuf(str(exc) or "cannot parse it")) from None
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _pb_attributes(rs.resource.attributes)},
                "scopeSpans": [
                    {
                        "scope": {"name": ss.scope.name, "version": ss.scope.version},
                        "spans": [_pb_span(span) for span in ss.spans],
                    }
                    for ss in rs.scope_spans
                ],
            }
            for rs in request.resource_spans
        ]
    }


def _pb_span(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_time_unix_nano),
        "endTimeUnixNano": str(span.end_time_unix_nano),
        "attributes": _pb_attributes(span.attributes),
        "status": {"code": span.status.code, "message": span.status.message},
    }
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id.hex()
    if span.events:
        out["events"] = [
            {
                "name": event.name,
                "timeUnixNano": str(event.time_unix_nano),
                "attributes": _pb_attributes(event.attributes),
            }
            for event in span.events
        ]
    return out


def _pb_attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": kv.key, "value": _pb_value(kv.value)} for kv in attributes]


def _pb_value(value: Any) -> dict[str, Any]:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "int_value":
        return {"intValue": str(value.int_value)}
    if kind == "double_value":
        return {"doubleValue": value.double_value}
    if kind == "array_value":
        return {"arrayValue": {"values": [_pb_value(v) for v in value.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": _pb_attributes(value.kvlist_value.values)}}
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode()}
    return {}


def _decode_json(body: bytes, limits: Limits | None = None) -> dict[str, Any]:
    limits = limits or Limits()
    request = load_json_object(body, limits, '{"resourceSpans": […]}')
    refuse_other_signal(request, LOGS_ENDPOINT, "trace")
    count_json(request, limits)
    for i, rs in enumerate(_list(request, "resourceSpans", "resource_spans", "$")):
        if not isinstance(rs, dict):
            raise BadOtlp(f"$.resourceSpans[{i}] must be an object with scopeSpans")
        for j, ss in enumerate(_list(rs, "scopeSpans", "scope_spans", f"$.resourceSpans[{i}]")):
            if not isinstance(ss, dict):
                raise BadOtlp(f"$.resourceSpans[{i}].scopeSpans[{j}] must be an object with spans")
            path = f"$.resourceSpans[{i}].scopeSpans[{j}]"
            for k, span in enumerate(_list(ss, "spans", "spans", path)):
                if not isinstance(span, dict):
                    raise BadOtlp(f"{path}.spans[{k}] must be a span object")
    _check_integers(request)
    return request


def _check_integers(request: dict[str, Any]) -> None:
    """BadOtlp naming a time or integer attribute value of a trace export that no integer
    holds (``check_integers``), wherever ``spans_of`` reads one."""
    for rs_path, rs in each(request, "$", "resourceSpans", "resource_spans"):
        check_integers(rs.get("resource"), f"{rs_path}.resource")
        scopes = [
            ("scopeSpans", "scope_spans"),
            ("instrumentationLibrarySpans", "instrumentation_library_spans"),
        ]
        for camel, snake in scopes:
            for ss_path, ss in each(rs, rs_path, camel, snake):
                check_integers(ss.get("scope"), f"{ss_path}.scope")
                for span_path, span in each(ss, ss_path, "spans", "spans"):
                    check_integers(span, span_path, SPAN_TIMES)
                    for key in ("events", "links"):
                        for event_path, event in each(span, span_path, key, key):
                            check_integers(event, event_path, EVENT_TIMES)


def each(obj: dict[str, Any], path: str, camel: str, snake: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of a list an OTLP/JSON object holds (under either name), with their paths."""
    key = camel if camel in obj else snake
    items = obj.get(key)
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield f"{path}.{key}[{i}]", item


# The times of OTLP/JSON objects, read as integers (``_nanos``), by either name.
SPAN_TIMES = ("startTimeUnixNano", "start_time_unix_nano", "endTimeUnixNano", "end_time_unix_nano")
EVENT_TIMES = ("timeUnixNano", "time_unix_nano")


def check_integers(holder: Any, path: str, times: tuple[str, ...] = ()) -> None:
    """BadOtlp naming a time of an object, or an integer among its attributes (inside their
    arrays and key-value lists too) and its body, that is a JSON number no integer holds:
    NaN, Infinity, or one past a double's range (1e400, which JSON reads as Infinity).
    Reading one as an integer would raise; anything else is left to the reader, as before."""
    if not isinstance(holder, dict):
        return
    for key in times:
        if _not_finite(holder.get(key)):
            raise BadOtlp(
                f"{path}.{key} is {_shown(holder[key])}, which is no time: send the nanoseconds since "
                'the epoch as a string of digits, e.g. "1700000000000000000"'
            )
    key_values: list[tuple[str, Any]] = [(f"{path}.attributes", holder.get("attributes"))]  # lists
    values: list[tuple[str, Any]] = [(f"{path}.body", holder["body"])] if "body" in holder else []
    while key_values or values:
        if key_values:
            where, kvs = key_values.pop()
            if isinstance(kvs, list):
                values += [
                    (f"{where}[{i}].value", kv.get("value"))
                    for i, kv in enumerate(kvs)
                    if isinstance(kv, dict)
                ]
            continue
        where, value = values.pop()
        if not isinstance(value, dict):
            continue
        for key in ("intValue", "int_value"):
            if _not_finite(value.get(key)):
                raise BadOtlp(
                    f"{where}.{key} is {_shown(value[key])}, which is no integer: send it as a string "
                    "of digits, or a fraction as doubleValue"
                )
        for key in ("arrayValue", "array_value"):
            array = value.get(key)
            if isinstance(array, dict) and isinstance(array.get("values"), list):
                values += [(f"{where}.{key}.values[{i}]", item) for i, item in enumerate(array["values"])]
        for key in ("kvlistValue", "kvlist_value"):
            kvlist = value.get(key)
            if isinstance(kvlist, dict):
                key_values.append((f"{where}.{key}.values", kvlist.get("values")))


def _not_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _shown(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return ("-" if value < 0 else "") + "Infinity (or a number past a double's range, such as 1e400)"


def load_json_object(body: bytes, limits: Limits, example: str) -> dict[str, Any]:
    """An OTLP/JSON body as the object it holds, within the limits on JSON; BadOtlp (whose
    message shows ``example``) for anything else."""
    if limits.json_values is not None and json_input.more_values_than(body, limits.json_values):
        raise TooLarge(
            f"the body holds more than {limits.json_values} JSON values",
            "json_values",
            limits.json_values,
        )
    try:
        # OTLP/JSON is UTF-8, never sniffed.
        request = json_input.loads(bytes(body).decode("utf-8"), max_depth=limits.depth)
    except UnicodeDecodeError as exc:
        raise BadOtlp(f"the body is not UTF-8 JSON (Content-Type: application/json): {exc}") from None
    except json_input.JsonRefused as exc:
        refusal = TooDeep if exc.limit == "depth" else BadOtlp
        raise refusal(
            f"the body is not JSON this server reads (Content-Type: application/json): {exc}"
        ) from None
    except ValueError as exc:
        raise BadOtlp(f"the body is not valid JSON (Content-Type: application/json): {exc}") from None
    if not isinstance(request, dict):
        raise BadOtlp(f"the body must be a JSON object like {example} (OTLP/JSON)")
    return request


def count_json(request: dict[str, Any], limits: Limits) -> list[int]:
    """[spans, events, attributes, groups] of a decoded OTLP/JSON export, as ``count_protobuf``
    counts them, and read where ``spans_of`` reads them; TooLarge at the first over."""
    counter = _Counter(limits)
    # Every element counts, an object or not, before any is looked at: a list of millions
    # is refused at the cost of its length.
    resources = _every(request, "resourceSpans", "resource_spans")
    counter.add(GROUPS, len(resources))
    for rs in _dicts(resources):
        count_resource(rs.get("resource"), counter)
        scopes = _every(rs, "scopeSpans", "scope_spans") + _every(
            rs, "instrumentationLibrarySpans", "instrumentation_library_spans"
        )
        counter.add(GROUPS, len(scopes))
        for ss in _dicts(scopes):
            _count_attributes(ss.get("scope"), counter)
            _count_attributes(ss.get("instrumentationLibrary"), counter)
            spans = _every(ss, "spans", "spans")
            counter.add(SPANS, len(spans))
            for span in _dicts(spans):
                _count_attributes(span, counter)
                for key in ("events", "links"):
                    happenings = span.get(key)
                    if isinstance(happenings, list):
                        counter.add(EVENTS, len(happenings))
                        for happening in happenings:
                            _count_attributes(happening, counter)
    return counter.counts


def _every(obj: dict[str, Any], camel: str, snake: str) -> list[Any]:
    value = obj.get(camel, obj.get(snake))
    return value if isinstance(value, list) else []


def _dicts(items: list[Any]) -> Iterator[dict[str, Any]]:
    return (item for item in items if isinstance(item, dict))


def count_resource(resource: Any, counter: _Counter) -> None:
    """A resource's attributes, and its entity references and the keys they name, as the
    protobuf walk counts them."""
    _count_attributes(resource, counter)
    if not isinstance(resource, dict):
        return
    refs = _every(resource, "entityRefs", "entity_refs")
    counter.add(ATTRIBUTES, len(refs))
    for ref in _dicts(refs):
        counter.add(ATTRIBUTES, len(_every(ref, "idKeys", "id_keys")))
        counter.add(ATTRIBUTES, len(_every(ref, "descriptionKeys", "description_keys")))


def _count_attributes(holder: Any, counter: _Counter) -> None:
    """The attributes of a resource, scope, span, event or link, and the values inside them."""
    if not isinstance(holder, dict):
        return
    lists: list[Any] = [holder.get("attributes")]  # of KeyValues
    values: list[Any] = []  # AnyValues, to look inside
    while lists or values:
        if lists:
            kvs = lists.pop()
            if isinstance(kvs, list):
                counter.add(ATTRIBUTES, len(kvs))
                values.extend(kv.get("value") for kv in kvs if isinstance(kv, dict))
            continue
        value = values.pop()
        if not isinstance(value, dict):
            continue
        array = value.get("arrayValue", value.get("array_value"))
        if isinstance(array, dict) and isinstance(array.get("values"), list):
            counter.add(ATTRIBUTES, len(array["values"]))
            values.extend(array["values"])
        kvlist = value.get("kvlistValue", value.get("kvlist_value"))
        if isinstance(kvlist, dict):
            lists.append(kvlist.get("values"))


def _list(obj: dict[str, Any], camel: str, snake: str, path: str) -> list[Any]:
    value = obj.get(camel, obj.get(snake))
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadOtlp(f"{path}.{camel} must be a list")
    return value


class Signal(NamedTuple):
    """How to decode one signal's export once its body is inflated: protobuf and JSON; its
    name says which export a refusal expected ("trace", "logs"). ``walk`` counts a protobuf
    export without building it ([records, events, attributes, groups]), and ``records``
    counts the records of a decoded one."""

    name: str
    protobuf: Callable[[bytes, Limits], dict[str, Any]]
    json: Callable[[bytes, Limits], dict[str, Any]]
    walk: Callable[[bytes, Limits], list[int]]
    records: Callable[[dict[str, Any]], int]


def _span_count(request: dict[str, Any]) -> int:
    """The spans of a decoded trace export, counted where ``count_json`` counts them."""
    count = 0
    for rs in _dicts(_every(request, "resourceSpans", "resource_spans")):
        scopes = _every(rs, "scopeSpans", "scope_spans") + _every(
            rs, "instrumentationLibrarySpans", "instrumentation_library_spans"
        )
        count += sum(len(_every(ss, "spans", "spans")) for ss in _dicts(scopes))
    return count


TRACES = Signal("trace", _decode_protobuf, _decode_json, count_protobuf, _span_count)


def refuse_other_signal(request: dict[str, Any], other: Endpoint, name: str) -> None:
    """WrongSignal when an OTLP/JSON body sent as a ``name`` export holds ``other``'s top-level
    field. An empty export (``{}``) holds neither, and is an empty export of either."""
    camel, snake = other.field
    key = camel if request.get(camel) is not None else snake
    if request.get(key) is not None:
        raise WrongSignal(
            f"the body is an OTLP {other.signal} export (it holds {key}), not a {name} export; send it "
            f"to {other.path}",
            other.signal,
            other.path,
        )


# --- spans ---------------------------------------------------------------------------------


@dataclass
class Span:
    """What the reader needs of one span: ids, times, status and attributes as values."""

    trace_id: str
    span_id: str
    name: str
    start: int
    end: int
    error: bool
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)
    order: int = 0

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or "")


def spans_of(request: dict[str, Any]) -> list[Span]:
    """Every span of a decoded request, in the order sent."""
    spans: list[Span] = []
    for rs in _items(request, "resourceSpans", "resource_spans"):
        resource_obj = rs.get("resource")
        resource = _attributes(resource_obj.get("attributes")) if isinstance(resource_obj, dict) else {}
        scopes = _items(rs, "scopeSpans", "scope_spans") or _items(
            rs, "instrumentationLibrarySpans", "instrumentation_library_spans"
        )
        for ss in scopes:
            for raw in _items(ss, "spans", "spans"):
                spans.append(_span(raw, resource, len(spans)))
    return spans


def _items(obj: Any, camel: str, snake: str) -> list[dict[str, Any]]:
    if not isinstance(obj, dict):
        return []
    value = obj.get(camel, obj.get(snake))
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _span(raw: dict[str, Any], resource: dict[str, Any], order: int) -> Span:
    given_status = raw.get("status")
    status: dict[str, Any] = given_status if isinstance(given_status, dict) else {}
    code = status.get("code")
    attributes = _attributes(raw.get("attributes"))
    events = [
        otel_events.Event(
            str(event.get("name") or ""),
            _attributes(event.get("attributes")),
            time=_nanos(event.get("timeUnixNano", event.get("time_unix_nano"))),
        )
        for event in _every(raw, "events", "events")
        if isinstance(event, dict)
    ]
    # The GenAI conventions allow the message content on an event instead of the span.
    for event in events:
        for key, value in event.attributes.items():
            if key.startswith("gen_ai.") and key not in attributes:
                attributes[key] = value
    name = str(raw.get("name") or "")
    with_conventions(attributes, events, name)
    return Span(
        trace_id=_hex_id(raw.get("traceId", raw.get("trace_id"))),
        span_id=_hex_id(raw.get("spanId", raw.get("span_id"))),
        name=name,
        start=_nanos(raw.get("startTimeUnixNano", raw.get("start_time_unix_nano"))),
        end=_nanos(raw.get("endTimeUnixNano", raw.get("end_time_unix_nano"))),
        error=code in (STATUS_ERROR, "2", "STATUS_CODE_ERROR"),
        status_message=str(status.get("message") or ""),
        attributes=attributes,
        resource=resource,
        order=order,
    )


def with_conventions(attributes: dict[str, Any], events: list[otel_events.Event], name: str = "") -> None:
    """Adds to a span's attributes the GenAI semantic-convention ones its other conventions
    mean (OpenInference, OpenLLMetry's legacy attributes, GenAI events on the span), where
    the span does not write them itself: one reading of conversations serves them all."""
    for derived in (openinference.as_semconv(attributes, name), otel_legacy.as_semconv(attributes)):
        for key, value in derived.items():
            attributes.setdefault(key, value)
    genai = [event for event in events if otel_events.is_genai(event)]
    if genai:
        tool_span = attributes.get("gen_ai.operation.name") == "execute_tool"
        for key, value in otel_events.as_semconv(genai, tool_span=tool_span).items():
            attributes.setdefault(key, value)


def _hex_id(value: Any) -> str:
    """OTLP/JSON ids are hex; an id sent base64 (as protobuf's JSON mapping writes it) is read too."""
    if not isinstance(value, str):
        return ""
    try:
        bytes.fromhex(value)
        return value.lower()
    except ValueError:
        pass
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for kv in raw:
            if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                out[kv["key"]] = any_value(kv.get("value"))
    return out


def any_value(value: Any) -> Any:
    """An OTLP/JSON AnyValue as the plain value it holds."""
    if not isinstance(value, dict):
        return value
    for key, read in _READERS:
        if key in value:
            return read(value[key])
    return None


def _int(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def _array(value: Any) -> list[Any]:
    values = value.get("values") if isinstance(value, dict) else None
    return [any_value(v) for v in values] if isinstance(values, list) else []


def _kvlist(value: Any) -> dict[str, Any]:
    return _attributes(value.get("values")) if isinstance(value, dict) else {}


_READERS: tuple[tuple[str, Any], ...] = (
    ("stringValue", lambda v: v),
    ("string_value", lambda v: v),
    ("boolValue", bool),
    ("bool_value", bool),
    ("intValue", _int),
    ("int_value", _int),
    ("doubleValue", lambda v: v),
    ("double_value", lambda v: v),
    ("arrayValue", _array),
    ("array_value", _array),
    ("kvlistValue", _kvlist),
    ("kvlist_value", _kvlist),
    ("bytesValue", lambda v: v),
    ("bytes_value", lambda v: v),
)


# --- conversations -------------------------------------------------------------------------


class Reading(NamedTuple):
    """What one request holds: its conversations, and those it cannot build yet, with why."""

    conversations: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    spans: int  # every span of the request, GenAI or not


def conversations_from_spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The native conversations of a decoded request, in the order their spans came."""
    return read(request).conversations


def external_ids(request: dict[str, Any]) -> list[str]:
    """The names of the conversations a decoded request carries spans of, in order."""
    return list(group_spans(spans_of(request)))


def read(request: dict[str, Any]) -> Reading:
    return read_spans(spans_of(request))


def read_spans(spans: list[Span]) -> Reading:
    """The conversations of some spans (read from a trace export, or made of log records),
    and a reason for each trace or conversation that gives none."""
    conversations: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for name, group in group_spans(spans).items():
        if not storable(name):
            skipped.append(_unstorable(name, group))
            continue
        conversation = _conversation(name, group)
        if conversation is None:
            skipped.append(_why_not(name, group))
        else:
            conversations.append(conversation)
    read_traces = {s.trace_id for s in spans if _is_genai(s)}
    plain = [s for s in spans if s.trace_id not in read_traces]
    for trace_id in dict.fromkeys(s.trace_id for s in plain):
        count = sum(1 for s in plain if s.trace_id == trace_id)
        skipped.append(
            {
                "external_id": trace_id,
                "reason": f"{count} span(s) of this trace follow no GenAI convention read here "
                "(GenAI semantic conventions, OpenInference llm.*/tool.*, OpenLLMetry gen_ai.prompt.N/"
                "gen_ai.completion.N, GenAI span events); nothing of them is stored",
            }
        )
    return Reading(conversations, skipped, len(spans))


# The chat spans of a trace hold no content: the instrumentation writes it as log records.
AWAITING_LOGS = "logs"

# What no database keeps in text or JSON: U+0000 and unpaired surrogates (JSON's "\ud800"
# reads as one). Ingestion checks every payload against it (``checks.ingestion``).
UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")


def storable(name: str) -> bool:
    """Whether a conversation's name can be stored, or looked up: a query cannot carry it."""
    return UNSTORABLE_TEXT.search(name) is None


def _unstorable(name: str, spans: list[Span]) -> dict[str, str]:
    given = any(s.attributes.get("gen_ai.conversation.id") == name for s in spans)
    return {
        "external_id": name,
        "reason": f"its name ({'gen_ai.conversation.id' if given else 'the trace id'}) holds U+0000 "
        "or an unpaired surrogate, which no database keeps; send it as valid Unicode text",
    }


def _why_not(name: str, spans: list[Span]) -> dict[str, str]:
    """Why spans grouped as one conversation give none, and what to do about it."""
    chats = [s for s in spans if s.operation in CHAT_OPERATIONS]
    if any(openinference.KIND in s.attributes for s in chats) and not any(_has_messages(s) for s in spans):
        return {
            "external_id": name,
            "reason": "the OpenInference LLM spans carry no llm.input_messages or llm.output_messages: "
            "their content is hidden (OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS)",
        }
    if chats and not any(_has_messages(s) for s in spans):
        return {
            "external_id": name,
            "awaiting": AWAITING_LOGS,
            "reason": "the chat spans carry no message content: send the instrumentation's log records "
            "to /v1/logs (joined to these spans by trace and span id), or record content on the spans "
            "(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)",
        }
    if spans and all(s.operation == "execute_tool" for s in spans):
        return {
            "external_id": name,
            "reason": "only tool spans (execute_tool), no chat span with gen_ai.input.messages or "
            "gen_ai.output.messages: the chat span of the call is in another export or another trace",
        }
    return {
        "external_id": name,
        "reason": "no chat span with readable messages (gen_ai.input.messages / gen_ai.output.messages, "
        "llm.input_messages.N, gen_ai.prompt.N, or GenAI events): message content may not be recorded, "
        "or the chat span is in another export",
    }


def _is_genai(span: Span) -> bool:
    return any(key.startswith("gen_ai.") for key in span.attributes)


def group_spans(spans: list[Span]) -> dict[str, list[Span]]:
    """The GenAI spans by the conversation they belong to, named as its ``external_id``."""
    genai = [s for s in spans if _is_genai(s)]
    by_trace: dict[str, str] = {}
    for span in genai:
        name = span.attributes.get("gen_ai.conversation.id")
        if isinstance(name, str) and name and span.trace_id not in by_trace:
            by_trace[span.trace_id] = name
    groups: dict[str, list[Span]] = {}
    for span in genai:
        name = span.attributes.get("gen_ai.conversation.id")
        if not (isinstance(name, str) and name):
            name = by_trace.get(span.trace_id) or span.trace_id
        groups.setdefault(name, []).append(span)
    return groups


def _conversation(name: str, spans: list[Span]) -> dict[str, Any] | None:
    chats = [s for s in spans if s.operation in CHAT_OPERATIONS and _has_messages(s)]
    chats = chats or [s for s in spans if _has_messages(s)]  # an agent span carrying them
    chats.sort(key=lambda s: (s.end, s.start, s.order), reverse=True)
    latest, messages = None, None
    for span in chats:
        messages = _span_messages(span)
        # Messages with neither text nor calls are content that was not recorded.
        if messages and any(m.get("content") or m.get("tool_calls") for m in messages):
            latest = span
            break
    if latest is None or not messages:
        return None

    messages, by_order = call_pairing.pair_results(messages)
    receipts_by_call, spans_by_order = _match_tool_spans(
        messages, [s for s in spans if s.operation == "execute_tool"]
    )
    messages = _with_span_results(messages, receipts_by_call)
    offered = _tools_offered(latest.attributes.get("gen_ai.tool.definitions"))
    turns = []
    for group in split_into_turns(messages):
        turn: dict[str, Any] = {"messages": group}
        if offered is not None:
            turn["tools_offered"] = offered
        receipts = _receipts(group, receipts_by_call)
        if receipts is not None:
            turn["receipts"] = receipts
        turns.append(turn)

    conversation: dict[str, Any] = {"external_id": name}
    agent = {}
    agent_name = _first(spans, "gen_ai.agent.name") or latest.resource.get("service.name")
    if isinstance(agent_name, str) and agent_name:
        agent["name"] = agent_name
    model = latest.attributes.get("gen_ai.response.model") or latest.attributes.get("gen_ai.request.model")
    if not (isinstance(model, str) and model):
        model = _first(chats, "gen_ai.response.model") or _first(chats, "gen_ai.request.model")
    if isinstance(model, str) and model:
        agent["model"] = model
    if agent:
        conversation["agent"] = agent
    starts = [s.start for s in spans if s.start > 0]
    started_at = iso(min(starts)) if starts else None
    if started_at:
        conversation["started_at"] = started_at
    system = _system_text(latest.attributes.get("gen_ai.system_instructions"))
    if system:
        conversation["system"] = system
    if by_order or spans_by_order:
        conversation["metadata"] = {call_pairing.METADATA_KEY: call_pairing.BY_NAME_AND_ORDER}
    conversation["turns"] = turns
    return conversation


def _first(spans: list[Span], key: str) -> Any:
    for span in spans:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _has_messages(span: Span) -> bool:
    return "gen_ai.input.messages" in span.attributes or "gen_ai.output.messages" in span.attributes


def _json_list(value: Any) -> list[Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, list) else None


def _span_messages(span: Span) -> list[dict[str, Any]] | None:
    """The span's input messages followed by its output messages; None when unreadable."""
    out: list[dict[str, Any]] = []
    for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
        if key not in span.attributes:
            continue
        messages = _json_list(span.attributes[key])
        if messages is None:
            return None
        for message in messages:
            if isinstance(message, dict):
                out.extend(semconv_message(message))
    return out


def semconv_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One GenAI semantic-conventions message as native messages.

    Its `tool_call_response` parts (`response`, or `result`) become tool messages, placed
    first; its text parts, joined by newlines, and its `tool_call` parts make the message
    of its role.
    """
    role = native_role(message.get("role"))
    parts = message.get("parts")
    if parts is None and isinstance(message.get("content"), str):
        parts = [{"type": "text", "content": message["content"]}]
    if not isinstance(parts, list):
        return []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "tool_call":
            calls.append(tool_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response":
            response = part["response"] if "response" in part else part.get("result")
            result: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": part.get("id"),
                "content": content_blocks.result_of(response),  # Strands writes content blocks
            }
            if isinstance(part.get("name"), str):
                result["name"] = part["name"]  # read by call_pairing when the id pairs nothing
            if part.get("is_error") is True:
                result["is_error"] = True
            results.append(result)
    if role == "assistant" and not calls and len(texts) == 1:
        written = repr_calls.calls_in_text(texts[0])
        if written is not None:
            texts = written[1]
            calls = [tool_call(c["id"], c["name"], c["arguments"]) for c in written[0]]
    text = "\n".join(texts)
    out = list(results)
    if role == "assistant":
        if text or calls:
            reply: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
    elif role in ("user", "system"):
        if text or not results:
            out.append({"role": role, "content": text})
    elif role == "tool" and text and not results:
        # With no id, call_pairing gives it the id of the call it answers, by name and order.
        call_id = message.get("tool_call_id") or message.get("id")
        out.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return out


def _match_tool_spans(messages: list[dict[str, Any]], tool_spans: list[Span]) -> tuple[dict[int, Span], bool]:
    """Each call of the transcript with its execute_tool span, keyed by the call object's
    identity: by call id, the k-th call of an id with the k-th span of that id (in start
    order), since an id may be reused once its call was answered; else (a span with no call
    id, or one no call has) by tool name, in order. True when some span was paired so."""
    calls = [call for m in messages for call in m.get("tool_calls") or ()]
    named: list[Span] = []
    unnamed: list[Span] = []
    for span in sorted(tool_spans, key=lambda s: (s.start, s.order)):
        (named if _span_call_id(span) else unnamed).append(span)
    ids = [call["id"] if isinstance(call["id"], str) else None for call in calls]
    spans = by_occurrence(ids, named, _span_call_id)
    matched = {id(call): span for call, span in zip(calls, spans, strict=True) if span is not None}
    taken = {id(span) for span in matched.values()}
    leftover = sorted([s for s in named if id(s) not in taken] + unnamed, key=lambda s: (s.start, s.order))
    by_name = False
    for span in leftover:
        tool = span.attributes.get("gen_ai.tool.name")
        for call in calls:
            if id(call) not in matched and call["function"]["name"] == tool:
                matched[id(call)] = span
                by_name = True
                break
    return matched, by_name


def _span_call_id(span: Span) -> str | None:
    call_id = span.attributes.get("gen_ai.tool.call.id")
    return call_id if isinstance(call_id, str) and call_id else None


def _with_span_results(messages: list[dict[str, Any]], spans: dict[int, Span]) -> list[dict[str, Any]]:
    """The transcript with a tool message, from its span's result, for each call no tool
    message of its turn answers (paired as validation pairs them: ``checks.suite.pairing``)."""
    answered = {id(call) for group in split_into_turns(messages) for call in answered_in_json(group).values()}
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "tool" and pending:
            out.extend(pending)
            pending = []
        out.append(message)
        for call in message.get("tool_calls") or ():
            span = spans.get(id(call))
            if span is not None and id(call) not in answered:
                answered.add(id(call))
                pending.append(_span_tool_message(call["id"], span))
    out.extend(pending)
    return out


def _span_tool_message(call_id: str, span: Span) -> dict[str, Any]:
    result = span.attributes.get("gen_ai.tool.call.result")
    content = result_text(result) if result is not None else span.status_message
    message: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
    if span.error:
        message["is_error"] = True
    return message


def _receipts(messages: list[dict[str, Any]], spans: dict[int, Span]) -> list[dict[str, Any]] | None:
    """One receipt per tool message of a turn where a span recorded a call; None elsewhere.

    A span's receipt says whether the call succeeded and when it ran; a tool message with
    no span of its own gets a receipt naming the call only, so the transcript fills it in
    as it would have without spans. Each tool message is paired with the call it answers
    (``checks.suite.pairing``), so a reused id takes the tool and span of its own call.
    """
    answers = answered_in_json(messages)
    if not any(id(call) in spans for call in answers.values()):
        return None
    receipts: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if message.get("role") != "tool":
            continue
        call = answers.get(i)
        span = spans.get(id(call)) if call is not None else None
        tool = span.attributes.get("gen_ai.tool.name") if span is not None else None
        if not (isinstance(tool, str) and tool) and call is not None:
            tool = call["function"]["name"]
        if not tool:
            continue
        receipt: dict[str, Any] = {"call_id": message.get("tool_call_id"), "tool": tool}
        if span is not None:
            receipt["ok"] = not span.error
            receipt["outcome"] = "error" if span.error else "ok"
            at = iso(span.start) if span.start > 0 else None
            if at:
                receipt["at"] = at
        receipts.append(receipt)
    return receipts


def _tools_offered(value: Any) -> list[Any] | None:
    tools = _json_list(value)
    if tools is None:
        return None
    out: list[Any] = []
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            spec: dict[str, Any] = function if isinstance(function, dict) else tool
            out.append(offered_tool(spec.get("name"), spec.get("parameters")))
    return out


def _system_text(value: Any) -> str:
    if isinstance(value, str):
        parts = _json_list(value)
        if parts is None:
            return value
    else:
        parts = value if isinstance(value, list) else []
    return "\n".join(
        p["content"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    )


def iso(nanos: int) -> str | None:
    """Unix nanoseconds as an ISO 8601 UTC timestamp (microseconds when not whole seconds)."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    try:
        moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=rest // 1000)
    except (OverflowError, OSError, ValueError):
        return None  # a time no calendar date can hold
    spec = "microseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")
