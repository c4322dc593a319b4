"""Findings and corrections in forms others can file and build on.

- CSV and JSONL of the findings a filter selects, each with its decisions and corrections
  (CSV cells that a spreadsheet would run as a formula are neutralized);
- findings as OpenTelemetry ``gen_ai.evaluation.result`` events (OTLP/JSON logs);
- the dataset of approved corrections, in the OpenAI chat fine-tuning shape or as plain
  (answer, correction, evidence) records.

Every format is a generator of text pieces, so a page streams it and a background job writes
it to a file under ``var/exports`` with the same code. Each format reads the findings the
one finding filter selects (``filters.FindingFilter``), in keyset batches.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db.models import Model, Prefetch, QuerySet, prefetch_related_objects
from django.utils import timezone

from .. import blind_review
from ..evidence_calls import StoredCalls, evidence_call, stored_calls
from ..filters import ALL, FindingFilter
from ..models import (
    Correction,
    CorrectionState,
    Decision,
    Finding,
    Message,
    Project,
    Severity,
    ToolCall,
)
from ..suite import SUITE_VERSION

BATCH = 500
EXCERPT_LIMIT = 2000  # characters of a tool result kept beside a finding's evidence


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def _batches[M: Model](rows: QuerySet[M]) -> Iterator[list[M]]:
    """The rows in id order, a batch at a time (keyset, so a large export stays flat)."""
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def _counted[T](items: Iterable[T], on_progress: Callable[[int], None]) -> Iterator[T]:
    """The items as they come, saying how many have gone by every BATCH, and at the end."""
    n = 0
    for n, item in enumerate(items, start=1):  # noqa: B007 (n is read after the loop)
        if n % BATCH == 0:
            on_progress(n)
        yield item
    on_progress(n)


def _evidence(finding: Finding, calls: StoredCalls) -> list[dict[str, Any]]:
    out = []
    for item in finding.evidence:
        if not isinstance(item, dict):
            continue
        call = evidence_call(finding, item, calls)
        start, end = item.get("start"), item.get("end")
        excerpt = None
        if call is not None:
            result = call["result"]
            excerpt = result[start:end] if start is not None and end is not None else result
            excerpt = excerpt[:EXCERPT_LIMIT]
        out.append(
            {
                "call_id": item.get("call_id"),
                "tool": call["tool"] if call else None,
                "path": item.get("path"),
                "start": start,
                "end": end,
                "excerpt": excerpt,
            }
        )
    return out


def finding_record(
    finding: Finding, calls: StoredCalls, project: Project, base_url: str = "", user: Any = None
) -> dict[str, Any]:
    """A finding with where it stands, what it rests on, and what reviewers did about it, as
    ``user`` may see it (``blind_review``): under blind double review no other reviewer's
    verdict, reason or correction until they have decided it, as on the turn page; for
    nobody (an API key), none at all while the finding is blind."""
    convo, turn = finding.conversation, finding.turn
    seen = blind_review.seen_by(finding, user, project)
    claim = None
    if finding.claim_text or finding.claim_start is not None:
        claim = {"text": finding.claim_text, "start": finding.claim_start, "end": finding.claim_end}
    return {
        "id": finding.pk,
        "url": f"{base_url}/p/{project.slug}/turns/{turn.pk}/#finding-{finding.pk}",
        "project": project.slug,
        "conversation": {
            "id": convo.pk,
            "external_id": convo.external_id,
            "title": convo.title,
            "agent": convo.agent_name,
            "model": convo.agent_model,
            "started_at": _iso(convo.started_at),
        },
        "turn": {"id": turn.pk, "index": turn.index, "answer": turn.answer},
        "checker": finding.checker,
        "code": finding.code,
        "severity": finding.severity,
        "status": finding.status,
        "value": finding.value,
        "claim": claim,
        "evidence": _evidence(finding, calls),
        "explanation": finding.explanation,
        "suite_correction": finding.correction,
        "details": finding.details,
        "provenance": {
            "suite_version": finding.run.suite_version if finding.run else None,
            "run": finding.run_id,
            "fingerprint": finding.fingerprint,
            "reported_at": _iso(finding.created_at),
            "updated_at": _iso(finding.updated_at),
        },
        "decisions": [
            {
                "verdict": d.verdict,
                "reviewer": d.reviewer.get_username(),
                "reason": d.reason,
                "at": _iso(d.created_at),
            }
            for d in seen.decisions
        ],
        "corrections": [
            {
                "text": c.text,
                "state": c.state,
                "author": c.author.get_username(),
                "approver": c.approver.get_username() if c.approver else None,
                "note": c.note,
                "created_at": _iso(c.created_at),
                "decided_at": _iso(c.decided_at),
            }
            for c in seen.corrections
        ],
    }


def finding_records(
    project: Project, selection: FindingFilter, user: Any = None, base_url: str = ""
) -> Iterator[dict[str, Any]]:
    findings = (
        selection.findings(project, user=user)
        .select_related("conversation", "turn", "run")
        .prefetch_related(
            Prefetch(
                "decisions",
                queryset=Decision.objects.select_related("reviewer").order_by("created_at", "id"),
            ),
            Prefetch(
                "corrections",
                queryset=Correction.objects.select_related("author", "approver").order_by("created_at", "id"),
            ),
        )
    )
    for batch in _batches(findings):
        calls = stored_calls(batch)
        for finding in batch:
            yield finding_record(finding, calls, project, base_url, user)


# A cell starting with one of these is run as a formula by spreadsheets (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


CSV_COLUMNS = [
    "finding_id",
    "url",
    "conversation",
    "conversation_title",
    "agent",
    "model",
    "turn",
    "checker",
    "code",
    "severity",
    "status",
    "value",
    "claim",
    "evidence",
    "explanation",
    "suite_correction",
    "decision",
    "decided_by",
    "decided_at",
    "decision_reason",
    "approved_correction",
    "correction_author",
    "correction_approver",
    "reported_at",
    "suite_version",
]


# What a reader cannot see before a formula sign: spaces of every width, line and paragraph
# separators, format characters (U+200B, U+FEFF, direction marks) and controls.
INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cf", "Cc"})


def _shown_from(text: str) -> int:
    """Where the first character a reader would see stands: past the leading invisible run."""
    at = 0
    while at < len(text) and (text[at].isspace() or unicodedata.category(text[at]) in INVISIBLE):
        at += 1
    return at


def neutralize(value: Any) -> str:
    """A cell as text that a spreadsheet shows and never evaluates.

    Spreadsheets skip leading blanks and line breaks before a formula and read full-width
    signs (＝, ＋, －, ＠) as their ASCII forms, so the first character past any run of
    invisible ones (``INVISIBLE``, not only ASCII blanks: an em space or a zero-width space
    hides a formula as well) is compared in its compatibility form (NFKC)."""
    text = "" if value is None else str(value)
    at = _shown_from(text)
    first = unicodedata.normalize("NFKC", text[at : at + 1])
    if text.startswith(FORMULA_STARTS) or first.startswith(FORMULA_STARTS):
        return "'" + text
    return text


def _evidence_cell(evidence: list[dict[str, Any]]) -> str:
    if not evidence:
        return "none"
    parts = []
    for item in evidence:
        where = f"[{item['start']}:{item['end']}]" if item["start"] is not None else ""
        excerpt = f" {item['excerpt'][:300]}" if item["excerpt"] else ""
        parts.append(f"{item['tool'] or '?'} {item['call_id'] or ''}{where}{excerpt}".strip())
    return "\n".join(parts)


def csv_row(record: dict[str, Any]) -> list[str]:
    decision = record["decisions"][-1] if record["decisions"] else {}
    approved = [c for c in record["corrections"] if c["state"] == CorrectionState.APPROVED]
    correction = approved[-1] if approved else {}
    convo = record["conversation"]
    row = [
        record["id"],
        record["url"],
        convo["external_id"],
        convo["title"],
        convo["agent"],
        convo["model"],
        record["turn"]["index"],
        record["checker"],
        record["code"],
        record["severity"],
        record["status"],
        record["value"],
        (record["claim"] or {}).get("text", ""),
        _evidence_cell(record["evidence"]),
        record["explanation"],
        record["suite_correction"],
        decision.get("verdict", ""),
        decision.get("reviewer", ""),
        decision.get("at", ""),
        decision.get("reason", ""),
        correction.get("text", ""),
        correction.get("author", ""),
        correction.get("approver", ""),
        record["provenance"]["reported_at"],
        record["provenance"]["suite_version"],
    ]
    return [neutralize(cell) for cell in row]


class _Line:
    """A file-like object whose write returns what was written, for csv.writer in a stream."""

    def write(self, value: str) -> str:
        return value


def csv_lines(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(CSV_COLUMNS)
    for record in records:
        yield writer.writerow(csv_row(record))


def jsonl_lines(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


EVALUATION_EVENT = "gen_ai.evaluation.result"


SEVERITY_NUMBERS = {Severity.FLAG: (13, "WARN"), Severity.INFO: (9, "INFO")}


def _attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        wrapped: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}  # OTLP/JSON carries 64-bit integers as strings
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    else:
        wrapped = {"stringValue": str(value)}
    return {"key": key, "value": wrapped}


def _unix_nano(value: datetime) -> str:
    return str(int(value.timestamp() * 1_000_000) * 1000)


def evaluation_event(record: dict[str, Any]) -> dict[str, Any]:
    """One finding as a ``gen_ai.evaluation.result`` log record.

    The evaluation is the checker; its label is the finding's code; the score is 0 when the
    claim failed the check (a flag) and 1 when the finding only informs (grounded, computed,
    established). The reviewer's verdict travels beside it."""
    severity_number, severity_text = SEVERITY_NUMBERS.get(record["severity"], (9, "INFO"))
    reported = datetime.fromisoformat(record["provenance"]["reported_at"])
    attributes = [
        _attribute("gen_ai.evaluation.name", f"receipts.{record['checker']}"),
        _attribute("gen_ai.evaluation.score.value", 0.0 if record["severity"] == Severity.FLAG else 1.0),
        _attribute("gen_ai.evaluation.score.label", record["code"]),
        _attribute("gen_ai.evaluation.explanation", record["explanation"]),
        _attribute("gen_ai.conversation.id", record["conversation"]["external_id"]),
    ]
    if record["conversation"]["agent"]:
        attributes.append(_attribute("gen_ai.agent.name", record["conversation"]["agent"]))
    if record["conversation"]["model"]:
        attributes.append(_attribute("gen_ai.response.model", record["conversation"]["model"]))
    attributes += [
        _attribute("receipts.turn.index", record["turn"]["index"]),
        _attribute("receipts.finding.id", record["id"]),
        _attribute("receipts.finding.severity", record["severity"]),
        _attribute("receipts.finding.status", record["status"]),
        _attribute("receipts.finding.url", record["url"]),
    ]
    if record["claim"]:
        attributes.append(_attribute("receipts.claim.text", record["claim"]["text"]))
    if record["value"]:
        attributes.append(_attribute("receipts.finding.value", record["value"]))
    return {
        "timeUnixNano": _unix_nano(reported),
        "observedTimeUnixNano": _unix_nano(reported),
        "severityNumber": severity_number,
        "severityText": severity_text,
        "eventName": EVALUATION_EVENT,
        "body": {"stringValue": record["explanation"]},
        "attributes": attributes,
    }


def otel_chunks(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """An OTLP/JSON logs export (``ExportLogsServiceRequest``), written as it goes."""
    resource = {"attributes": [_attribute("service.name", "receipts")]}
    scope = {"name": "receipts.checks", "version": SUITE_VERSION}
    yield '{"resourceLogs":[{"resource":' + json.dumps(resource)
    yield ',"scopeLogs":[{"scope":' + json.dumps(scope) + ',"logRecords":['
    for i, record in enumerate(records):
        yield ("," if i else "") + "\n" + json.dumps(evaluation_event(record), ensure_ascii=False)
    yield "\n]}]}]}\n"


def approved_corrections(
    project: Project, selection: FindingFilter, user: Any = None
) -> QuerySet[Correction]:
    """The approved corrections of the findings the filter selects, whatever their status."""
    findings = replace(selection, status=ALL).findings(project, user=user)
    return (
        Correction.objects.filter(project=project, state=CorrectionState.APPROVED, finding__in=findings)
        .select_related("finding__turn", "finding__conversation", "author", "approver")
        .order_by("pk")
    )


def _turn_exchange(turn: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The turn as OpenAI chat messages before its answer, and the tools it called (read
    from the turn's prefetched messages and calls when a batch fetched them)."""
    calls = sorted(turn.tool_calls.all(), key=lambda c: c.pk)
    out: list[dict[str, Any]] = []
    tools: list[str] = []
    for message in sorted(turn.messages.all(), key=lambda m: m.seq):
        if turn.answer_seq is not None and message.seq >= turn.answer_seq:
            break
        if message.role == "assistant":
            requested = [c for c in calls if c.request_seq == message.seq]
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if requested:
                entry["tool_calls"] = [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {"name": c.tool, "arguments": c.arguments or "{}"},
                    }
                    for c in requested
                ]
                tools += [c.tool for c in requested if c.tool not in tools]
            out.append(entry)
        elif message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text})
        else:
            out.append({"role": message.role, "content": message.text})
    return out, tools


def chat_example(correction: Correction) -> dict[str, Any]:
    """One approved correction as an OpenAI chat fine-tuning example: the turn as the model saw
    it (system prompt, user, its tool calls and their results), then the corrected answer."""
    finding = correction.finding
    messages, tools = _turn_exchange(finding.turn)
    if finding.conversation.system and not any(m["role"] == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": finding.conversation.system})
    messages.append({"role": "assistant", "content": correction.text})
    example: dict[str, Any] = {"messages": messages}
    if tools:
        example["tools"] = [
            {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
            for name in tools
        ]
    return example


def plain_record(correction: Correction, calls: StoredCalls) -> dict[str, Any]:
    finding = correction.finding
    return {
        "answer": finding.turn.answer,
        "correction": correction.text,
        "evidence": _evidence(finding, calls),
        "finding": finding.summary(),
        "conversation": finding.conversation.external_id,
        "turn": finding.turn.index,
        "author": correction.author.get_username(),
        "approver": correction.approver.get_username() if correction.approver else None,
        "approved_at": _iso(correction.decided_at),
    }


def dataset_lines(project: Project, selection: FindingFilter, shape: str, user: Any = None) -> Iterator[str]:
    """The approved corrections ``user`` may see, one JSON line each. One under blind review
    (a bulk decision undone after the approval leaves its finding so) is left out: it says
    its author confirmed."""
    for fetched in _batches(approved_corrections(project, selection, user)):
        batch = fetched
        if project.double_review:  # blind review reads decisions only where it is on
            prefetch_related_objects(fetched, "finding__decisions")
            batch = [c for c in fetched if blind_review.may_see_correction(c, user, project)]
        calls = stored_calls([c.finding for c in batch]) if shape == "plain" else {}
        if shape == "chat":  # each example replays its turn: two queries a batch, not per line
            prefetch_related_objects(
                batch,
                Prefetch("finding__turn__messages", queryset=Message.objects.order_by("seq")),
                Prefetch("finding__turn__tool_calls", queryset=ToolCall.objects.order_by("id")),
            )
        for correction in batch:
            record = chat_example(correction) if shape == "chat" else plain_record(correction, calls)
            yield json.dumps(record, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Format:
    kind: str
    label: str
    extension: str
    content_type: str
    # (project, filter, user, base_url, on_progress) -> text pieces; the user is who "mine" is
    write: Callable[[Project, FindingFilter, Any, str, Callable[[int], None]], Iterator[str]]
    # (project, filter, user) -> how many records the export holds
    count: Callable[[Project, FindingFilter, Any], int]


def _findings_format(kind: str, label: str, extension: str, content_type: str, lines: Any) -> Format:
    return Format(
        kind,
        label,
        extension,
        content_type,
        lambda project, selection, user, base_url, progress: lines(
            _counted(finding_records(project, selection, user, base_url), progress)
        ),
        lambda project, selection, user: selection.findings(project, user=user).count(),
    )


def _dataset_format(shape: str, label: str) -> Format:
    return Format(
        f"corrections-{shape}",
        label,
        "jsonl",
        "application/jsonl; charset=utf-8",
        lambda project, selection, user, base_url, progress: _counted(
            dataset_lines(project, selection, shape, user), progress
        ),
        lambda project, selection, user: approved_corrections(project, selection, user).count(),
    )


FORMATS: dict[str, Format] = {
    f.kind: f
    for f in [
        _findings_format("csv", "CSV", "csv", "text/csv; charset=utf-8", csv_lines),
        _findings_format("jsonl", "JSON Lines", "jsonl", "application/jsonl; charset=utf-8", jsonl_lines),
        _findings_format(
            "otel",
            "OpenTelemetry evaluation events (OTLP/JSON)",
            "otlp.json",
            "application/json",
            otel_chunks,
        ),
        _dataset_format("chat", "Approved corrections, OpenAI chat fine-tuning shape"),
        _dataset_format("plain", "Approved corrections, plain records"),
    ]
}


def filename_for(project: Project, kind: str) -> str:
    stem, extension = {
        "csv": ("findings", "csv"),
        "jsonl": ("findings", "jsonl"),
        "otel": ("evaluations", "otlp.json"),
        "corrections-chat": ("corrections-chat", "jsonl"),
        "corrections-plain": ("corrections", "jsonl"),
        "pdf": ("audit-report", "pdf"),
    }[kind]
    return f"{project.slug}-{stem}-{timezone.now():%Y%m%d-%H%M%S}.{extension}"
