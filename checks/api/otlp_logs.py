"""OTLP/HTTP log ingestion: `POST /v1/logs`, protobuf or JSON, gzip or not.

Where instrumentations that keep message content off their spans send it (the official
OpenAI instrumentation's `gen_ai.*.message` / `gen_ai.choice` events, and its event-only
`gen_ai.client.inference.operation.details`). The GenAI records of each span become that
chat call, and each trace's calls a conversation (checks/ingest/otel_logs.py) named by the
trace id as its spans would name it, stored or extended exactly as a trace export's are.
Same key, scope and limits as `/v1/traces`; the answer is the OTLP logs export response in
the request's encoding, with a partial success counting the records not taken and why.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from rest_framework import renderers
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.request import Request
from rest_framework.response import Response

from .. import ingestion, refusals
from ..ingest import otel, otel_logs
from .auth import project_of
from .otlp import ProtobufRenderer, answer, receive
from .permissions import needs_scope
from .views import ERROR_SHAPE, _key_required, key_of

MAX_REASONS = 10


@extend_schema(
    operation_id="otlp_logs",
    summary="Send OpenTelemetry logs (OTLP/HTTP)",
    description=(
        "An ExportLogsServiceRequest as protobuf (`application/x-protobuf`) or JSON "
        "(`application/json`), optionally gzip-encoded. GenAI event records (`gen_ai.system.message`, "
        "`gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`, "
        "`gen_ai.client.inference.operation.details`) are joined to their chat span by trace and span "
        "id; each trace's calls make a conversation named by the trace id, the same one its spans at "
        "`/v1/traces` name, and a later export extends it. Answers the OTLP logs export response, with "
        "a partial success (`rejectedLogRecords`) for what was not taken and why. The limits of "
        "`/v1/traces` apply, log records counting as spans; over one is a 413. A trace export sent "
        "here is a 400 naming `/v1/traces`."
    ),
    request={"application/x-protobuf": OpenApiTypes.BINARY, "application/json": OpenApiTypes.OBJECT},
    responses={200: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 413: ERROR_SHAPE},
)
@api_view(["POST"])
@renderer_classes([renderers.JSONRenderer, ProtobufRenderer])
@permission_classes([needs_scope("ingest")])
def logs(request: Request) -> Response | HttpResponse:
    project = project_of(request)
    if project is None:
        return _key_required()
    received = receive(request, project, signal=otel_logs.LOGS, shape_of=logs_shape)
    if isinstance(received, Response):
        return received
    decoded, body, shape = received
    content_type, encoding = shape["content_type"], shape["content_encoding"]
    reading = otel_logs.read(decoded)
    result = ingestion.ingest_export(
        project=project,
        body=body,
        content_type=content_type,
        content_encoding=encoding,
        reading=reading.reading,
    )
    rejected, message = what_was_refused(result, reading)
    if rejected:
        # Kept for the project's Refusals page: exporters log a partial success at most.
        refusals.record(
            project=project,
            api_key=key_of(request),
            endpoint=request.path,
            status_code=200,
            reason=message,
            rejected=rejected,
            shape=logs_shape(decoded, **shape),
        )

    counted = ("rejected_log_records", "rejectedLogRecords")
    return answer(content_type, ExportLogsServiceResponse(), rejected, message, counted=counted)


def what_was_refused(result: ingestion.ExportResult, reading: otel_logs.LogReading) -> tuple[int, str]:
    """How many records of a log export were not taken, and a message that says why: those
    of each conversation refused or not built, and those that are no GenAI event of a trace."""
    names: list[str] = []
    reasons: list[str] = []
    for item in result.items:
        if item.status in ("conflict", "invalid"):
            names.append(item.external_id or "")
            reason = item.errors[0]["message"] if item.errors else item.status
            reasons.append(f"{item.external_id}: {item.status}: {reason}")
    for skipped in result.skipped:
        names.append(skipped["external_id"])
        reasons.append(f"{skipped['external_id'] or 'records'}: {skipped['reason']}")
    rejected = reading.rejected(names)
    if reasons and not rejected:
        rejected = 1  # something was refused, though no record is counted for it
    message = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        message += f"; and {len(reasons) - MAX_REASONS} more"
    return min(rejected, max(reading.records, 1)), message


def logs_shape(
    request: dict[str, Any] | None, *, content_type: str, content_encoding: str, size: int
) -> dict[str, Any]:
    """The shape of a log export, as ``refusals.otlp_shape`` gives a trace export's: its
    scopes, event names and attribute keys, and whether its records name a trace, never a
    value."""
    shape = refusals.otlp_shape(None, content_type=content_type, content_encoding=content_encoding, size=size)
    if request is None:
        return shape
    scopes = [
        sl["scope"].get("name")
        for rl in otel._items(request, "resourceLogs", "resource_logs")
        for sl in otel._items(rl, "scopeLogs", "scope_logs")
        if isinstance(sl.get("scope"), dict)
    ]
    read = otel_logs.records_of(request)
    shape["log_records"] = len(read)
    shape["scopes"] = refusals._names(scopes)
    shape["event_names"] = refusals._names(r.event.name for r in read)
    shape["attribute_keys"] = refusals._names(key for r in read for key in r.event.attributes)
    shape["with_trace_id"] = sum(1 for r in read if r.trace_id.strip("0"))
    return shape
