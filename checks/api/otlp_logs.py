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

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from rest_framework import renderers, status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.request import Request
from rest_framework.response import Response

from .. import ingestion, refusals
from ..ingest import otel, otel_logs
from ..models import ApiKey, Project
from .auth import project_of
from .errors import TOO_LARGE, error_response
from .otlp import LIMIT_SETTINGS, PROTOBUF, ProtobufRenderer, limits
from .permissions import needs_scope
from .views import ERROR_SHAPE, _key_required, _too_large

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
        "`/v1/traces` apply, log records counting as spans; over one is a 413."
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
    if refusal := _too_large(request, settings.RECEIPTS_BULK_MAX_BYTES):
        return refusal
    content_type = request.META.get("CONTENT_TYPE", "")
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "")
    body = request.body
    shape = {"content_type": content_type, "content_encoding": encoding, "size": len(body)}
    try:
        decoded = otel.decode_request(body, content_type, encoding, limits=limits(), signal=otel_logs.LOGS)
    except otel.TooLarge as exc:
        setting = LIMIT_SETTINGS[exc.what]
        return _refused(
            request,
            project,
            error_response(
                TOO_LARGE,
                f"The export is over a limit: {setting} is {exc.limit}; send it in several exports, "
                "or raise the limit.",
                [{"path": "$", "message": f"{exc.message} ({setting})"}],
            ),
            logs_shape(None, **shape),
        )
    except otel.BadOtlp as exc:
        message = f"{exc.message} (RECEIPTS_JSON_MAX_DEPTH)" if isinstance(exc, otel.TooDeep) else exc.message
        return _refused(
            request,
            project,
            error_response(
                status.HTTP_400_BAD_REQUEST,
                "The body is not an OTLP logs export.",
                [{"path": "$", "message": message}],
            ),
            logs_shape(None, **shape),
        )
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
            api_key=_key_of(request),
            endpoint=request.path,
            status_code=200,
            reason=message,
            rejected=rejected,
            shape=logs_shape(decoded, **shape),
        )

    if content_type.split(";")[0].strip().lower() == PROTOBUF:
        answer = ExportLogsServiceResponse()
        if rejected:
            answer.partial_success.rejected_log_records = rejected
            answer.partial_success.error_message = message[:2000]
        return HttpResponse(answer.SerializeToString(), content_type=PROTOBUF)
    data: dict[str, Any] = {}
    if rejected:
        data["partialSuccess"] = {"rejectedLogRecords": str(rejected), "errorMessage": message[:2000]}
    return Response(data)


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


def _key_of(request: Request) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


def _refused(request: Request, project: Project, response: Response, shape: dict[str, Any]) -> Response:
    """Keeps a refused export's reason and shape for the project, and answers the refusal."""
    data = response.data or {}
    refusals.record(
        project=project,
        api_key=_key_of(request),
        endpoint=request.path,
        status_code=response.status_code,
        reason=refusals.reason_of(data.get("detail", ""), data.get("errors")),
        shape=shape,
    )
    return response
