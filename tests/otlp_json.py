"""OTLP exports written as an SDK's exporter writes them, for the convention and logs tests.

``span``/``record`` build OTLP/JSON objects (hex ids, typed attribute values), ``traces`` /
``logs`` wrap them in an export, and ``protobuf`` turns either into the protobuf body an
OTLP/HTTP exporter sends (ids as bytes), through the generated messages themselves.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

BASE_NS = 1_796_083_200_000_000_000  # 2026-12-01T00:00:00Z
QUESTION = "How many items are in order A-1001, and has it shipped?"
ORDER = {"order_id": "A-1001", "status": "shipped", "item_count": 2, "items": ["MUG-01", "TEE-02"]}
ORDER_TEXT = json.dumps(ORDER)
WRONG_ANSWER = "Order A-1001 has 5 items and it has shipped."
SYSTEM = "You are the order desk. Look orders up with get_order before answering."
GET_ORDER_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"],
}


def trace_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:32]


def span_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": attributes(v)}}
    return {"stringValue": str(v)}


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": value(v)} for key, v in values.items()]


def span(
    trace: str,
    name: str,
    start_ms: int,
    end_ms: int,
    attrs: dict[str, Any],
    *,
    events: list[tuple[str, dict[str, Any]]] | None = None,
    parent: str = "",
    error: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace_id(trace),
        "spanId": span_id(f"{trace}:{name}:{start_ms}"),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(BASE_NS + start_ms * 1_000_000),
        "endTimeUnixNano": str(BASE_NS + end_ms * 1_000_000),
        "attributes": attributes(attrs),
        "status": {"code": 2 if error else 1},
    }
    if parent:
        out["parentSpanId"] = span_id(parent)
    if events:
        out["events"] = [
            {
                "name": event,
                "timeUnixNano": str(BASE_NS + start_ms * 1_000_000 + i),
                "attributes": attributes(a),
            }
            for i, (event, a) in enumerate(events)
        ]
    return out


def traces(spans: list[dict[str, Any]], service: str = "order-desk") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes({"service.name": service})},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": spans}],
            }
        ]
    }


def record(
    trace: str,
    span_name: str,
    at_ms: int,
    event: str,
    body: Any = None,
    attrs: dict[str, Any] | None = None,
    *,
    event_as_attribute: bool = False,
) -> dict[str, Any]:
    """A log record of a GenAI event; the event named in ``eventName``, or (older SDKs) in
    the ``event.name`` attribute."""
    given = dict(attrs or {})
    out: dict[str, Any] = {
        "timeUnixNano": str(BASE_NS + at_ms * 1_000_000),
        "observedTimeUnixNano": str(BASE_NS + at_ms * 1_000_000),
        "traceId": trace_id(trace) if trace else "",
        "spanId": span_id(span_name) if span_name else "",
    }
    if event_as_attribute:
        given["event.name"] = event
    else:
        out["eventName"] = event
    out["attributes"] = attributes(given)
    if body is not None:
        out["body"] = value(body)
    return out


def logs(records: list[dict[str, Any]], service: str = "order-desk") -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": attributes({"service.name": service})},
                "scopeLogs": [{"scope": {"name": "tests"}, "logRecords": records}],
            }
        ]
    }


def _ids_as_base64(node: Any) -> Any:
    """protobuf's JSON mapping writes bytes as base64 where OTLP/JSON writes hex ids."""
    if isinstance(node, dict):
        out = {}
        for key, item in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64encode(bytes.fromhex(item)).decode()
            else:
                out[key] = _ids_as_base64(item)
        return out
    if isinstance(node, list):
        return [_ids_as_base64(item) for item in node]
    return node


def protobuf(export: dict[str, Any]) -> bytes:
    message = ExportLogsServiceRequest() if "resourceLogs" in export else ExportTraceServiceRequest()
    return json_format.ParseDict(_ids_as_base64(export), message).SerializeToString()


def body(export: dict[str, Any]) -> bytes:
    return json.dumps(export).encode()
