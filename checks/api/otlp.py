"""OTLP/HTTP trace ingestion: `POST /v1/traces`, protobuf or JSON, gzip or not.

What the OpenTelemetry exporters send by default; GenAI spans become conversations (see
checks/ingest/otel.py), each stored or refused on its own. The answer is the OTLP export
response in the request's encoding, with a partial success naming what was not taken and
counting its spans: nothing is answered as a plain success with nothing stored. Whatever is
refused is also kept for the project's Refusals page (checks/refusals.py), with the
export's shape, since exporters log a partial success at most. A body that is the other
signal's export (``otel.WrongSignal``) is refused as such, naming the endpoint it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from google.protobuf.message import Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from rest_framework import renderers, status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.request import Request
from rest_framework.response import Response

from .. import ingestion, refusals
from ..ingest import otel, pieces
from ..models import Project
from .auth import project_of
from .errors import TOO_LARGE, error_response
from .permissions import needs_scope
from .views import ERROR_SHAPE, _key_required, _too_large, declared_length, key_of, refused

PROTOBUF = "application/x-protobuf"
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


def limits() -> otel.Limits:
    """What one export may hold, from settings.py."""
    return otel.Limits(
        spans=settings.RECEIPTS_OTLP_MAX_SPANS,
        events=settings.RECEIPTS_OTLP_MAX_EVENTS,
        attributes=settings.RECEIPTS_OTLP_MAX_ATTRIBUTES,
        depth=settings.RECEIPTS_JSON_MAX_DEPTH,
        json_values=settings.RECEIPTS_JSON_MAX_VALUES,
        fields=settings.RECEIPTS_OTLP_MAX_FIELDS,
        bytes=settings.RECEIPTS_OTLP_MAX_DECOMPRESSED_BYTES,
        gzip_members=settings.RECEIPTS_OTLP_MAX_GZIP_MEMBERS,
    )


class ProtobufRenderer(renderers.BaseRenderer):
    """Lets a client that accepts only protobuf reach the view, which answers in bytes."""

    media_type = PROTOBUF
    format = "protobuf"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return data if isinstance(data, bytes) else b""


# An export's framing, as the shape functions of checks/refusals.py take it.
Framing = dict[str, Any]


def receive(
    request: Request,
    project: Project,
    *,
    signal: otel.Signal,
    shape_of: Callable[..., dict[str, Any]],
) -> tuple[dict[str, Any], bytes, Framing] | Response:
    """An export's body decoded to the OTLP/JSON shape, with the body and its framing; or the
    refusal (413 over a limit, 400 not an export of this signal), kept for the project's
    Refusals page with the shape ``shape_of`` gives of what could be read."""
    content_type = request.META.get("CONTENT_TYPE", "")
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "")
    framing = {"content_type": content_type, "content_encoding": encoding, "size": declared_length(request)}
    if refusal := _too_large(request, settings.RECEIPTS_BULK_MAX_BYTES):
        return refused(request, project, refusal, shape_of(None, **framing))
    body = request.body
    framing["size"] = len(body)
    try:
        decoded = otel.decode_request(body, content_type, encoding, limits=limits(), signal=signal)
        return decoded, body, framing
    except otel.TooLarge as exc:
        setting = LIMIT_SETTINGS[exc.what]
        response = error_response(
            TOO_LARGE,
            f"The export is over a limit: {setting} is {exc.limit}; send it in several exports, "
            "or raise the limit.",
            [{"path": "$", "message": f"{exc.message} ({setting})"}],
        )
    except otel.WrongSignal as exc:
        response = error_response(
            status.HTTP_400_BAD_REQUEST,
            f"The body is an OTLP {exc.signal} export, not a {signal.name} export: "
            f"send it to {exc.endpoint}.",
            [{"path": "$", "message": exc.message}],
        )
    except otel.BadOtlp as exc:
        message = f"{exc.message} (RECEIPTS_JSON_MAX_DEPTH)" if isinstance(exc, otel.TooDeep) else exc.message
        response = error_response(
            status.HTTP_400_BAD_REQUEST,
            f"The body is not an OTLP {signal.name} export.",
            [{"path": "$", "message": message}],
        )
    return refused(request, project, response, shape_of(None, **framing))


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
        "(`application/json`), optionally gzip-encoded. GenAI spans (`chat` and `execute_tool`) "
        "are grouped into conversations by `gen_ai.conversation.id` (else the trace id); a later "
        "export of one conversation extends it, its last turn too. A model call in a trace of its "
        "own joins the one stored conversation its input begins with (same agent, within "
        "RECEIPTS_OTLP_JOIN_WINDOW_SECONDS), and a lone `execute_tool` span the conversation "
        "holding its call. Answers the OTLP export response, with a partial success counting the "
        "spans not taken and saying why (also listed on the project's Refusals page). An export "
        "over a limit (spans, events, attributes, its size once decompressed: see the README's "
        "configuration) is refused whole with a 413; a logs export sent here, with a 400 naming "
        "`/v1/logs`."
    ),
    request={"application/x-protobuf": OpenApiTypes.BINARY, "application/json": OpenApiTypes.OBJECT},
    responses={200: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 413: ERROR_SHAPE},
)
@api_view(["POST"])
@renderer_classes([renderers.JSONRenderer, ProtobufRenderer])
@permission_classes([needs_scope("ingest")])
def traces(request: Request) -> Response | HttpResponse:
    project = project_of(request)
    if project is None:
        return _key_required()
    received = receive(request, project, signal=otel.TRACES, shape_of=refusals.otlp_shape)
    if isinstance(received, Response):
        return received
    decoded, body, shape = received
    content_type, encoding = shape["content_type"], shape["content_encoding"]
    reading = otel.read(decoded)
    result = ingestion.ingest_export(
        project=project,
        body=body,
        content_type=content_type,
        content_encoding=encoding,
        reading=reading,
        # A name no query can carry is not looked for: the reader said why it gives nothing.
        tool_results=pieces.lone_tool_results(
            decoded, [s["external_id"] for s in reading.skipped if otel.storable(s["external_id"])]
        ),
    )
    # Written once the export's own transaction is over, whatever it kept.
    rejected, message = what_was_refused(result, reading, decoded)
    if rejected:
        refusals.record(
            project=project,
            api_key=key_of(request),
            endpoint=request.path,
            status_code=200,
            reason=message,
            rejected=rejected,
            shape=refusals.otlp_shape(decoded, **shape),
        )

    counted = ("rejected_spans", "rejectedSpans")
    return answer(content_type, ExportTraceServiceResponse(), rejected, message, counted=counted)


def what_was_refused(
    result: ingestion.ExportResult, reading: otel.Reading, request: dict[str, Any]
) -> tuple[int, str]:
    """How many spans of an export gave nothing, and a message that says why, for the
    partial success: each refused conversation (its spans) and tool run (its span), each
    conversation that could not be built, and, when nothing at all was taken, every other
    span, named by what it is (no chat span with messages, no tool span). Spans whose
    content is awaited as log records are no failure of the sender: the message says where
    their content is read from, and they are not counted."""
    counts: dict[str, int] = {}
    for span in otel.spans_of(request):
        given = span.attributes.get("gen_ai.conversation.id")
        for name in {span.trace_id, given if isinstance(given, str) else ""} - {""}:
            counts[name] = counts.get(name, 0) + 1
    built = len(reading.conversations)
    rejected, awaited, reasons = 0, 0, []
    for item in result.items:
        if item.status not in ("conflict", "invalid"):
            continue
        rejected += 1 if item.index >= built else max(1, counts.get(item.external_id or "", 0))
        reason = item.errors[0]["message"] if item.errors else item.status
        reasons.append(f"{item.external_id}: {item.status}: {reason}")
    for skipped in result.skipped:
        spans = max(1, counts.get(skipped["external_id"], 0))
        if skipped.get("awaiting"):
            awaited += spans
        else:
            rejected += spans
        reasons.append(f"{skipped['external_id']}: {skipped['reason']}")
    taken = awaited or any(item.status not in ("conflict", "invalid") for item in result.items)
    rest = reading.spans - rejected
    if not taken and rest > 0:
        names = ", ".join(sorted({span.name for span in otel.spans_of(request)})[:10])
        reasons.append(
            f"{rest} span(s) gave no conversation: none is a chat span carrying its messages "
            "(gen_ai.input.messages / gen_ai.output.messages, or a convention the README lists) "
            f"nor a tool span (execute_tool) of a stored conversation; span names: {names}"
        )
        rejected += rest
    message = "; ".join(reasons[:10])
    if len(reasons) > 10:
        message += f"; and {len(reasons) - 10} more"
    return min(rejected, max(reading.spans, 1)), message
