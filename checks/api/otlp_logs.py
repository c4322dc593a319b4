"""OTLP/HTTP log ingestion: `POST /v1/logs`, protobuf or JSON, gzip or not.

Where instrumentations that keep message content off their spans send it (the official
OpenAI instrumentation's `gen_ai.*.message` / `gen_ai.choice` events, and its event-only
`gen_ai.client.inference.operation.details`). The GenAI records of each span become that
chat call, and each trace's calls a conversation (checks/ingest/otel_logs.py) named by the
trace id as its spans would name it, stored or extended exactly as a trace export's are.
Same key, scope, limits and answer as `/v1/traces` (``otlp.receive``): the export is kept as
received and answered with the OTLP logs export response, stored behind by a worker.
"""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from rest_framework import renderers
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.request import Request
from rest_framework.response import Response

from ..models import ExportSignal
from ..otlp_storing import logs_shape
from .auth import project_of
from .otlp import EXPORT_HEADER_SCHEMA, ProtobufRenderer, receive
from .permissions import needs_scope
from .views import ERROR_SHAPE, _key_required


@extend_schema(
    operation_id="otlp_logs",
    summary="Send OpenTelemetry logs (OTLP/HTTP)",
    description=(
        "An ExportLogsServiceRequest as protobuf (`application/x-protobuf`) or JSON "
        "(`application/json`), optionally gzip-encoded. Answered once the export is kept as received, "
        "before its conversations are stored: the `Receipts-Export` header names it, and "
        "`GET /api/v1/otlp-exports/{id}` says what became of it. GenAI event records "
        "(`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`, "
        "`gen_ai.tool.message`, `gen_ai.choice`, `gen_ai.client.inference.operation.details`) are "
        "joined to their chat span by trace and span id; each trace's calls make a conversation named "
        "by the trace id, the same one its spans at `/v1/traces` name, and a later export extends it. "
        "Records refused once read are listed on the project's Refusals page. The limits of "
        "`/v1/traces` apply, log records counting as spans; over one is a 413. A trace export sent "
        "here is a 400 naming `/v1/traces`; with too many exports waiting to be stored, a 503 with "
        "Retry-After."
    ),
    request={"application/x-protobuf": OpenApiTypes.BINARY, "application/json": OpenApiTypes.OBJECT},
    parameters=[EXPORT_HEADER_SCHEMA],
    responses={200: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 413: ERROR_SHAPE, 503: ERROR_SHAPE},
)
@api_view(["POST"])
@renderer_classes([renderers.JSONRenderer, ProtobufRenderer])
@permission_classes([needs_scope("ingest")])
def logs(request: Request) -> Response | HttpResponse:
    project = project_of(request)
    if project is None:
        return _key_required()
    return receive(
        request,
        project,
        signal=ExportSignal.LOGS,
        shape_of=logs_shape,
        response=ExportLogsServiceResponse(),
        counted=("rejected_log_records", "rejectedLogRecords"),
    )
