"""OTLP/HTTP log exports (`POST /v1/logs`) read as the GenAI calls their records describe.

Instrumentations that keep message content off their spans (the official OpenAI
instrumentation, OpenLLMetry's event mode) emit it as log records, each carrying the trace
and span id of the chat span it belongs to, and send them apart from the spans, in either
order. A log export is read in three steps:

- ``LOGS`` decodes it (protobuf or JSON, gzip or not: ``otel.decode_request`` with
  ``signal=LOGS``) into the OTLP/JSON shape, log records counted as spans against the same
  limits before anything is built;
- ``read`` gathers the GenAI records (``otel_events``: by ``eventName`` or the
  ``event.name`` attribute) of each span id, in time order, into one chat call, a span
  whose attributes are what those events mean;
- those calls are read by ``otel.read_spans`` exactly as a trace export's chat spans are,
  so the conversation of a trace has the same ``external_id`` (the trace id) whichever
  signal brought its content, and a later export of it extends what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from . import otel, otel_events

REQUEST = "ExportLogsServiceRequest"
EVENT_NAMES = sorted([*otel_events.MESSAGE_EVENTS, otel_events.CHOICE, otel_events.DETAILS])
NOUN = "log records"
# A record's times, read as integers (``otel._nanos``), by either name.
RECORD_TIMES = (*otel.EVENT_TIMES, "observedTimeUnixNano", "observed_time_unix_nano")

# The protobuf messages of a log export, as otel's walk counts them (see otel._EXPORT):
# opentelemetry/proto/{collector/logs,logs}/v1. A record's body is an AnyValue.
_LOG_RECORD: dict[int, tuple[int, Any]] = {
    5 << 3 | 2: (otel.NOTHING, otel._ANY_VALUE),  # body
    6 << 3 | 2: (otel.ATTRIBUTES, otel._KEY_VALUE),  # attributes
}
# A record holding a field of a span is one (see otel._LOG_RECORD_FIELDS for the converse):
# trace_id (1, bytes), span_id (2, bytes), kind (6, varint), start_time_unix_nano (7,
# fixed64), end_time_unix_nano (8, fixed64), dropped_attributes_count (10, varint), events
# (11, bytes), dropped_events_count (12, varint). A span's field 4 (parent_span_id) is not
# among them: the LogRecord's field 4 is reserved, once a name an early SDK may still write.
_SPAN_FIELDS = (
    1 << 3 | 2,
    2 << 3 | 2,
    6 << 3 | 0,
    7 << 3 | 1,
    8 << 3 | 1,
    10 << 3 | 0,
    11 << 3 | 2,
    12 << 3 | 0,
)
_LOG_RECORD.update(dict.fromkeys(_SPAN_FIELDS, (otel.FOREIGN, None)))
_SCOPE_LOGS = {1 << 3 | 2: (otel.NOTHING, otel._SCOPE), 2 << 3 | 2: (otel.SPANS, _LOG_RECORD)}
_RESOURCE_LOGS = {1 << 3 | 2: (otel.NOTHING, otel._RESOURCE), 2 << 3 | 2: (otel.GROUPS, _SCOPE_LOGS)}
_EXPORT = {1 << 3 | 2: (otel.GROUPS, _RESOURCE_LOGS)}


# --- decoding ------------------------------------------------------------------------------


def _decode_protobuf(body: bytes, limits: otel.Limits) -> dict[str, Any]:
    _count_protobuf(body, limits)
    try:
        request = ExportLogsServiceRequest.FromString(body)
    except (DecodeError, ValueError) as exc:
        raise otel.BadOtlp(otel._not_protobuf(str(exc) or "cannot parse it", REQUEST)) from None
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": otel._pb_attributes(rl.resource.attributes)},
                "scopeLogs": [
                    {
                        "scope": {"name": sl.scope.name, "version": sl.scope.version},
                        "logRecords": [_pb_record(record) for record in sl.log_records],
                    }
                    for sl in rl.scope_logs
                ],
            }
            for rl in request.resource_logs
        ]
    }


def _pb_record(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "timeUnixNano": str(record.time_unix_nano),
        "observedTimeUnixNano": str(record.observed_time_unix_nano),
        "traceId": record.trace_id.hex(),
        "spanId": record.span_id.hex(),
        "attributes": otel._pb_attributes(record.attributes),
    }
    if record.event_name:
        out["eventName"] = record.event_name
    if record.HasField("body"):
        out["body"] = otel._pb_value(record.body)
    return out


def _decode_json(body: bytes, limits: otel.Limits) -> dict[str, Any]:
    request = otel.load_json_object(body, limits, '{"resourceLogs": […]}')
    otel.refuse_other_signal(request, otel.TRACES_ENDPOINT, "logs")
    count_json(request, limits)
    for i, rl in enumerate(otel._list(request, "resourceLogs", "resource_logs", "$")):
        if not isinstance(rl, dict):
            raise otel.BadOtlp(f"$.resourceLogs[{i}] must be an object with scopeLogs")
        for j, sl in enumerate(otel._list(rl, "scopeLogs", "scope_logs", f"$.resourceLogs[{i}]")):
            if not isinstance(sl, dict):
                raise otel.BadOtlp(f"$.resourceLogs[{i}].scopeLogs[{j}] must be an object with logRecords")
            path = f"$.resourceLogs[{i}].scopeLogs[{j}]"
            for k, record in enumerate(otel._list(sl, "logRecords", "log_records", path)):
                if not isinstance(record, dict):
                    raise otel.BadOtlp(f"{path}.logRecords[{k}] must be a log record object")
    for rl_path, rl in otel.each(request, "$", "resourceLogs", "resource_logs"):
        otel.check_integers(rl.get("resource"), f"{rl_path}.resource")
        for sl_path, sl in otel.each(rl, rl_path, "scopeLogs", "scope_logs"):
            otel.check_integers(sl.get("scope"), f"{sl_path}.scope")
            for record_path, record in otel.each(sl, sl_path, "logRecords", "log_records"):
                otel.check_integers(record, record_path, RECORD_TIMES)
    return request


def count_json(request: dict[str, Any], limits: otel.Limits) -> list[int]:
    """[records, 0, attributes, groups] of a decoded OTLP/JSON log export, counted as
    ``otel.count_json`` counts a trace export's; TooLarge at the first over."""
    counter = otel._Counter(limits, NOUN)
    resources = otel._every(request, "resourceLogs", "resource_logs")
    counter.add(otel.GROUPS, len(resources))
    for rl in otel._dicts(resources):
        otel.count_resource(rl.get("resource"), counter)
        scopes = otel._every(rl, "scopeLogs", "scope_logs")
        counter.add(otel.GROUPS, len(scopes))
        for sl in otel._dicts(scopes):
            otel._count_attributes(sl.get("scope"), counter)
            records = otel._every(sl, "logRecords", "log_records")
            counter.add(otel.SPANS, len(records))
            for record in otel._dicts(records):
                otel._count_attributes(record, counter)
                otel._count_attributes({"attributes": [{"value": record.get("body")}]}, counter)
    return counter.counts


def _count_protobuf(body: bytes, limits: otel.Limits) -> list[int]:
    """[records, 0, attributes, groups] of a protobuf log export, walked as a trace export is."""
    return otel.count_protobuf(body, limits, _EXPORT, REQUEST, NOUN, otel.TRACES_ENDPOINT)


def _record_count(request: dict[str, Any]) -> int:
    """The log records of a decoded export, counted where ``count_json`` counts them."""
    return sum(
        len(otel._every(sl, "logRecords", "log_records"))
        for rl in otel._dicts(otel._every(request, "resourceLogs", "resource_logs"))
        for sl in otel._dicts(otel._every(rl, "scopeLogs", "scope_logs"))
    )


LOGS = otel.Signal("logs", _decode_protobuf, _decode_json, _count_protobuf, _record_count)


# --- records into calls --------------------------------------------------------------------


@dataclass
class LogReading:
    """What one log export holds: its conversations and what gave none (``reading``), how
    many records went into each (by its name), and the records read into nothing."""

    reading: otel.Reading
    records_by_name: dict[str, int] = field(default_factory=dict)
    unread: int = 0
    records: int = 0

    def rejected(self, refused: list[str]) -> int:
        """The records not taken: those of the conversations named (refused when stored,
        or skipped), and those no conversation reads."""
        return self.unread + sum(self.records_by_name.get(name, 0) for name in set(refused))


@dataclass
class _Record:
    trace_id: str
    span_id: str
    time: int
    event: otel_events.Event
    resource: dict[str, Any]
    order: int


def records_of(request: dict[str, Any]) -> list[_Record]:
    """Every log record of a decoded request, in the order sent."""
    records: list[_Record] = []
    for rl in otel._items(request, "resourceLogs", "resource_logs"):
        resource_obj = rl.get("resource")
        resource = otel._attributes(resource_obj.get("attributes")) if isinstance(resource_obj, dict) else {}
        for sl in otel._items(rl, "scopeLogs", "scope_logs"):
            for raw in otel._items(sl, "logRecords", "log_records"):
                attributes = otel._attributes(raw.get("attributes"))
                name = raw.get("eventName", raw.get("event_name")) or attributes.get("event.name") or ""
                time = otel._nanos(raw.get("timeUnixNano", raw.get("time_unix_nano"))) or otel._nanos(
                    raw.get("observedTimeUnixNano", raw.get("observed_time_unix_nano"))
                )
                event = otel_events.Event(str(name), attributes, otel.any_value(raw.get("body")), time)
                records.append(
                    _Record(
                        trace_id=otel._hex_id(raw.get("traceId", raw.get("trace_id"))),
                        span_id=otel._hex_id(raw.get("spanId", raw.get("span_id"))),
                        time=time,
                        event=event,
                        resource=resource,
                        order=len(records),
                    )
                )
    return records


def read(request: dict[str, Any]) -> LogReading:
    """The conversations the GenAI records of a decoded log export make, one chat call per
    span id; records of no trace, or of no GenAI event, are counted as not read."""
    records = records_of(request)
    calls: dict[tuple[str, str], list[_Record]] = {}
    unread = 0
    skipped: list[dict[str, str]] = []
    for record in records:
        genai = otel_events.is_genai(record.event)
        if genai and _is_zero(record.trace_id):
            unread += 1
            continue
        if genai:
            calls.setdefault((record.trace_id, record.span_id), []).append(record)
        else:
            unread += 1
    if unread:
        skipped.append(
            {
                "external_id": "",
                "reason": f"{unread} log record(s) are not a GenAI event joined to a trace "
                f"({', '.join(EVENT_NAMES)} with a trace id); they are not read",
            }
        )
    spans = [_call_span(key, group, i) for i, (key, group) in enumerate(calls.items())]
    reading = otel.read_spans(spans)
    for entry in reading.skipped:
        entry.pop("awaiting", None)
        entry["reason"] = (
            "the GenAI log records of this trace carry no message content "
            "(set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT to record it)"
        )
    # Named as the reader names them: by gen_ai.conversation.id when a record gives one.
    by_name = {
        name: sum(len(calls[(s.trace_id, s.span_id)]) for s in group)
        for name, group in otel.group_spans(spans).items()
    }
    return LogReading(
        otel.Reading(reading.conversations, skipped + reading.skipped, reading.spans),
        by_name,
        unread,
        len(records),
    )


def _is_zero(hex_id: str) -> bool:
    return not hex_id.strip("0")


def _call_span(key: tuple[str, str], records: list[_Record], order: int) -> otel.Span:
    """The records of one span id as the chat span they describe."""
    records = sorted(records, key=lambda r: (r.time, r.order))
    attributes: dict[str, Any] = {}
    for record in records:
        for name, value in record.event.attributes.items():
            if name.startswith("gen_ai.") and name not in otel_events.DETAIL_KEYS:
                attributes.setdefault(name, value)
    attributes.update(otel_events.as_semconv([r.event for r in records]))
    attributes.setdefault("gen_ai.operation.name", "chat")
    times = [r.time for r in records if r.time > 0]
    return otel.Span(
        trace_id=key[0],
        span_id=key[1],
        name="chat",
        start=min(times, default=0),
        end=max(times, default=0),
        error=False,
        status_message="",
        attributes=attributes,
        resource=records[0].resource,
        order=order,
    )
