"""Storing one OTLP export that was kept as received: decoded, read into conversations,
stored, and what was refused said and kept.

The endpoints (checks/api/otlp.py, otlp_logs.py) answer once an export's body is kept; a
worker (checks/raw_exports.py) then calls ``store`` for each export of its batch. What the
request could not afford to find out is found here: a protobuf string that is not UTF-8, a
conversation that conflicts with the stored one, spans that give no conversation. Each is
counted and said as the partial success of the OTLP answer would say it, kept on the export
(for GET /api/v1/otlp-exports/<id>) and, as every refusal is, on the project's Refusals page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from . import ingestion, refusals
from .ingest import otel, otel_logs, pieces
from .models import ExportSignal, ExportState, RawExport

MAX_REASONS = 10
STATUS_ACCEPTED = 200  # what the sender of an export was answered: its refusals come after


def limits() -> otel.Limits:
    """What one export may hold, from settings.py: the request screens against these, and
    the worker decodes against them again."""
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


SIGNALS = {ExportSignal.TRACES: otel.TRACES, ExportSignal.LOGS: otel_logs.LOGS}
ENDPOINTS = {ExportSignal.TRACES: otel.TRACES_ENDPOINT.path, ExportSignal.LOGS: otel.LOGS_ENDPOINT.path}


@dataclass(frozen=True)
class Outcome:
    """What became of one export: ``state`` stored (whatever part of it was refused) or
    refused (nothing of it taken), the records refused and why, the conversations by what
    became of them, and the check runs to send once the batch commits."""

    state: ExportState
    rejected: int = 0
    reason: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    run_ids: list[int] = field(default_factory=list)


def store(export: RawExport) -> Outcome:
    """Decodes and stores one export, and keeps a refusal for whatever of it was refused.
    Runs inside the caller's transaction: the rows, the refusal and the export's new state
    commit together or not at all."""
    signal = SIGNALS[ExportSignal(export.signal)]
    framing: dict[str, Any] = {
        "content_type": export.content_type,
        "content_encoding": export.content_encoding,
        "size": export.size,
    }
    shape_of = refusals.otlp_shape if export.signal == ExportSignal.TRACES else logs_shape
    try:
        decoded = otel.decode_request(
            bytes(export.body), export.content_type, export.content_encoding, limits=limits(), signal=signal
        )
    except otel.BadOtlp as exc:
        reason = f"The body is not an OTLP {signal.name} export: {exc.message}"
        return refuse(export, reason, shape_of(None, **framing))
    if export.signal == ExportSignal.TRACES:
        reading = otel.read(decoded)
        result = ingestion.ingest_export(
            project=export.project,
            export=export,
            reading=reading,
            # A name no query can carry is not looked for: the reader said why it gives nothing.
            tool_results=pieces.lone_tool_results(
                decoded, [s["external_id"] for s in reading.skipped if otel.storable(s["external_id"])]
            ),
        )
        rejected, message = trace_refusals(result, reading, decoded)
    else:
        log_reading = otel_logs.read(decoded)
        result = ingestion.ingest_export(project=export.project, export=export, reading=log_reading.reading)
        rejected, message = log_refusals(result, log_reading)
    if rejected:
        _record(export, message, rejected, shape_of(decoded, **framing))
    taken = any(item.status not in ("conflict", "invalid") for item in result.items) or any(
        skipped.get("awaiting") for skipped in result.skipped
    )
    state = ExportState.REFUSED if rejected and not taken else ExportState.STORED
    return Outcome(state, rejected, message, _counts(result), result.run_ids)


def refuse(export: RawExport, reason: str, shape: dict[str, Any] | None = None) -> Outcome:
    """An export refused whole after it was accepted: every record of it counted, the reason
    kept on the Refusals page."""
    shape = shape or refusals.otlp_shape(
        None, content_type=export.content_type, content_encoding=export.content_encoding, size=export.size
    )
    rejected = max(export.records, 1)
    _record(export, reason, rejected, shape)
    return Outcome(ExportState.REFUSED, rejected, reason)


def _record(export: RawExport, reason: str, rejected: int, shape: dict[str, Any]) -> None:
    refusals.record(
        project=export.project,
        api_key=export.api_key,
        endpoint=ENDPOINTS[ExportSignal(export.signal)],
        status_code=STATUS_ACCEPTED,
        reason=reason,
        rejected=rejected,
        shape={**shape, "export": export.pk},
    )


def _counts(result: ingestion.ExportResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in result.items:
        counts[item.status] = counts.get(item.status, 0) + 1
    if result.skipped:
        counts["not_built"] = len(result.skipped)
    return counts


def trace_refusals(
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
    return min(rejected, max(reading.spans, 1)), _joined(reasons)


def log_refusals(result: ingestion.ExportResult, reading: otel_logs.LogReading) -> tuple[int, str]:
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
    return min(rejected, max(reading.records, 1)), _joined(reasons)


def _joined(reasons: list[str]) -> str:
    message = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        message += f"; and {len(reasons) - MAX_REASONS} more"
    return message


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
