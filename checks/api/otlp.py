"""OTLP/HTTP trace ingestion: `POST /v1/traces`, protobuf or JSON, gzip or not.

What the OpenTelemetry exporters send by default; GenAI spans become conversations (see
checks/ingest/otel.py). The request does only what must answer at once (``receive``): the
key and its scope, the body's size, its framing and limits (``otel.screen_request``), each
a 4xx naming the limit, and the bound on the backlog (a 503 with Retry-After past it). The
body is then kept as received and answered with the OTLP export response and a
``Receipts-Export`` header naming it; workers store it behind (checks/raw_exports.py), and
GET /api/v1/otlp-exports/<id> says what became of it: stored, or refused with the reason
(also on the project's Refusals page, since exporters log a partial success at most). In
Celery's eager mode the export is stored before the answer, whose partial success then
counts what was refused and says why. A body that is the other signal's export
(``otel.WrongSignal``) is refused as such, naming the endpoint it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from google.protobuf.message import Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from rest_framework import renderers, status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.request import Request
from rest_framework.response import Response

from .. import ingestion, otlp_storing, raw_exports, refusals
from ..ingest import otel
from ..models import ExportSignal, Project
from .auth import project_of
from .errors import TOO_LARGE, error_response
from .permissions import needs_scope
from .views import ERROR_SHAPE, _key_required, _too_large, declared_length, key_of, refused

PROTOBUF = "application/x-protobuf"
# The header of an accepted export's answer that names it, for GET /api/v1/otlp-exports/<id>.
EXPORT_HEADER = "Receipts-Export"
EXPORT_HEADER_SCHEMA = OpenApiParameter(
    EXPORT_HEADER,
    int,
    OpenApiParameter.HEADER,
    response=[200],
    description="The export's id: `GET /api/v1/otlp-exports/{id}` says what became of it.",
)
# The setting behind each of otel.Limits, as otel.TooLarge names it.
LIMIT_SETTINGS = {
    "spans": "RECEIPTS_OTLP_MAX_SPANS",
    "groups": "RECEIPTS_OTLP_MAX_SPANS",
    "events": "RECEIPTS_OTLP_MAX_EVENTS",
    "attributes": "RECEIPTS_OTLP_MAX_ATTRIBUTES",
    "bytes": "RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES",
    "gzip_members": "RECEIPTS_OTLP_MAX_GZIP_MEMBERS",
    "json_values": "RECEIPTS_JSON_MAX_VALUES",
    "fields": "RECEIPTS_OTLP_MAX_FIELDS",
}

# What one export may hold, from settings.py (the worker decodes against the same).
limits = otlp_storing.limits


class ProtobufRenderer(renderers.BaseRenderer):
    """Lets a client that accepts only protobuf reach the view, which answers in bytes."""

    media_type = PROTOBUF
    format = "protobuf"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return data if isinstance(data, bytes) else b""


def receive(
    request: Request,
    project: Project,
    *,
    signal: ExportSignal,
    shape_of: Callable[..., dict[str, Any]],
    response: Message,
    counted: tuple[str, str],
) -> Response | HttpResponse:
    """An export of ``signal`` screened, kept and answered (``answer``, with the
    Receipts-Export header); or the refusal (413 over a limit, 400 not an export of this
    signal), kept for the project's Refusals page with the shape ``shape_of`` gives of the
    framing; or, past the backlog's bound, a 503 asking the exporter to retry."""
    expected = otlp_storing.SIGNALS[signal]
    content_type = request.META.get("CONTENT_TYPE", "")
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "")
    framing = {"content_type": content_type, "content_encoding": encoding, "size": declared_length(request)}
    if refusal := _too_large(request, settings.RECEIPTS_BULK_MAX_BYTES):
        return refused(request, project, refusal, shape_of(None, **framing))
    if full := raw_exports.backlog_full(framing["size"]):
        return busy(full)
    body = request.body
    framing["size"] = len(body)
    try:
        records = otel.screen_request(body, content_type, encoding, limits=limits(), signal=expected)
    except otel.TooLarge as exc:
        setting = LIMIT_SETTINGS[exc.what]
        refusal = error_response(
            TOO_LARGE,
            f"The export is over a limit: {setting} is {exc.limit}; send it in several exports, "
            "or raise the limit.",
            [{"path": "$", "message": f"{exc.message} ({setting})"}],
        )
    except otel.WrongSignal as exc:
        refusal = error_response(
            status.HTTP_400_BAD_REQUEST,
            f"The body is an OTLP {exc.signal} export, not a {expected.name} export: "
            f"send it to {exc.endpoint}.",
            [{"path": "$", "message": exc.message}],
        )
    except otel.BadOtlp as exc:
        message = f"{exc.message} (RECEIPTS_JSON_MAX_DEPTH)" if isinstance(exc, otel.TooDeep) else exc.message
        refusal = error_response(
            status.HTTP_400_BAD_REQUEST,
            f"The body is not an OTLP {expected.name} export.",
            [{"path": "$", "message": message}],
        )
    else:
        export = raw_exports.accept(
            project=project,
            api_key=key_of(request),
            signal=signal,
            body=body,
            content_type=content_type,
            content_encoding=encoding,
            records=records,
        )
        answered = answer(content_type, response, export.rejected, export.reason, counted=counted)
        answered[EXPORT_HEADER] = str(export.pk)
        return answered
    return refused(request, project, refusal, shape_of(None, **framing))


def busy(reason: str) -> Response:
    """503 with Retry-After: retryable under the OTLP specification, so the exporter keeps
    the export and sends it again, rather than dropping it on a timeout."""
    return error_response(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        "Too many exports are waiting to be stored; send this one again later.",
        [{"path": "$", "message": reason}],
        Retry_After=str(raw_exports.RETRY_AFTER_SECONDS),
    )


def answer(
    content_type: str, response: Message, rejected: int, message: str, *, counted: tuple[str, str]
) -> Response | HttpResponse:
    """The export response in the request's encoding: protobuf, or OTLP/JSON. With anything
    rejected or said, a partial success with the count (``counted``: its field's protobuf and
    JSON names) and the message; with nothing rejected, a message is a warning."""
    protobuf_field, json_field = counted
    # Names quoted from the export may hold an unpaired surrogate, which neither encoding can
    # carry; each is shown as U+FFFD, as on the Refusals page.
    message = ingestion.UNSTORABLE_TEXT.sub("\ufffd", message)
    if content_type.split(";")[0].strip().lower() == PROTOBUF:
        if rejected or message:
            setattr(response.partial_success, protobuf_field, rejected)  # type: ignore[attr-defined]
            response.partial_success.error_message = message[:2000]  # type: ignore[attr-defined]
        return HttpResponse(response.SerializeToString(), content_type=PROTOBUF)
    data: dict[str, Any] = {}
    if rejected or message:
        data["partialSuccess"] = {json_field: str(rejected), "errorMessage": message[:2000]}
    return Response(data)


@extend_schema(
    operation_id="otlp_traces",
    summary="Send OpenTelemetry traces (OTLP/HTTP)",
    description=(
        "An ExportTraceServiceRequest as protobuf (`application/x-protobuf`) or JSON "
        "(`application/json`), optionally gzip-encoded. Answered once the export is kept as "
        "received, before its conversations are stored: the `Receipts-Export` header names it, and "
        "`GET /api/v1/otlp-exports/{id}` says what became of it (waiting, stored, or refused with "
        "the reason). GenAI spans (`chat` and `execute_tool`) are grouped into conversations by "
        "`gen_ai.conversation.id` (else the trace id); a later export of one conversation extends "
        "it, its last turn too. A model call in a trace of its own joins the one stored "
        "conversation its input begins with (same agent, within RECEIPTS_OTLP_JOIN_WINDOW_SECONDS), "
        "and a lone `execute_tool` span the conversation holding its call. Spans refused once read "
        "are listed on the project's Refusals page. An export over a limit (spans, events, "
        "attributes, its size once decompressed: see the README's configuration) is refused whole "
        "with a 413; a logs export sent here, with a 400 naming `/v1/logs`; with too many exports "
        "waiting to be stored, a 503 with Retry-After."
    ),
    request={"application/x-protobuf": OpenApiTypes.BINARY, "application/json": OpenApiTypes.OBJECT},
    parameters=[EXPORT_HEADER_SCHEMA],
    responses={200: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 413: ERROR_SHAPE, 503: ERROR_SHAPE},
)
@api_view(["POST"])
@renderer_classes([renderers.JSONRenderer, ProtobufRenderer])
@permission_classes([needs_scope("ingest")])
def traces(request: Request) -> Response | HttpResponse:
    project = project_of(request)
    if project is None:
        return _key_required()
    counted = ("rejected_spans", "rejectedSpans")
    return receive(
        request,
        project,
        signal=ExportSignal.TRACES,
        shape_of=refusals.otlp_shape,
        response=ExportTraceServiceResponse(),
        counted=counted,
    )
