"""The audit report: the confirmed findings of a period or a conversation, as a PDF."""

from __future__ import annotations

import hashlib
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from .. import audit
from ..evidence_calls import StoredCalls, evidence_call, stored_calls
from ..filters import FindingFilter
from ..models import (
    Conversation,
    CorrectionState,
    Finding,
    FindingStatus,
    Project,
)
from .charts import status_chart
from .figures import Period, flags_of, overview, period_from, status_rows, summary_figures

NO_EVIDENCE = "No tool result of the conversation supports this claim."


def _confirmed(project: Project, period: Period | None, conversation: Conversation | None) -> list[Finding]:
    """The confirmed findings of the conversation, or else of the period's turns."""
    confirmed = FindingStatus.CONFIRMED.value
    if conversation is not None:
        findings = FindingFilter(status=confirmed, conversation=str(conversation.pk)).findings(project)
    elif period is not None:
        findings = period.findings(project, status=confirmed)
    else:
        findings = FindingFilter(status=confirmed).findings(project)
    return list(
        findings.select_related("conversation", "turn")
        .prefetch_related("decisions__reviewer", "corrections__author", "corrections__approver")
        .order_by("conversation__external_id", "turn__index", "claim_start", "pk")
    )


# Characters of a result shown on each side of an evidence span, and of a whole result.
CONTEXT, WHOLE = 120, 1200


def _finding_entry(finding: Finding, calls: StoredCalls) -> dict[str, Any]:
    """What the report shows of a confirmed finding: each evidence span once, highlighted in
    a little of the result around it (a result with no span, its start, once)."""
    evidence, seen = [], set()
    for item in finding.evidence:
        if not isinstance(item, dict):
            continue
        call = evidence_call(finding, item, calls)
        start, end = item.get("start"), item.get("end")
        place = (item.get("call_id"), item.get("path"), start, end)
        if place in seen:
            continue
        seen.add(place)
        result = call["result"] if call is not None else ""
        if start is not None and end is not None:
            left, right = max(0, start - CONTEXT), min(len(result), end + CONTEXT)
            before, span, after = result[left:start], result[start:end], result[end:right]
            cut_left, cut_right = left > 0, right < len(result)
        else:
            before, span, after = "", "", result[:WHOLE]
            cut_left, cut_right = False, len(result) > WHOLE
        evidence.append(
            {
                "tool": call["tool"] if call else "",
                "call_id": item.get("call_id") or "",
                "path": item.get("path") or "",
                "span": f"{start}–{end}" if start is not None else "",
                "before": before,
                "text": span,
                "after": after,
                "cut_left": cut_left,
                "cut": cut_right,
            }
        )
    decisions = list(finding.decisions.all())  # newest first
    decision = next((d for d in decisions if d.verdict == "confirmed"), decisions[0] if decisions else None)
    approved = [c for c in finding.corrections.all() if c.state == CorrectionState.APPROVED]
    details = finding.details or {}
    argument = (
        {"tool": details.get("tool", ""), "call_id": details["call_id"], "path": details["path"]}
        if details.get("call_id") and details.get("path")
        else None
    )
    return {
        "finding": finding,
        "argument": argument,
        "evidence": evidence,
        "decision": decision,
        "correction": max(approved, key=lambda c: c.decided_at or c.created_at) if approved else None,
    }


def report_context(
    project: Project,
    *,
    period: Period | None = None,
    conversation: Conversation | None = None,
    prepared_by: str = "",
) -> dict[str, Any]:
    findings = _confirmed(project, period, conversation)
    calls = stored_calls(findings)
    figures = summary_figures(project, None if conversation else period, conversation)
    charts: list[Any] = []
    if conversation is None and period is not None:
        over = overview(project, period)
        charts = [
            over.charts["checker_over_time"],
            over.charts["agents"],
            over.charts["status"],
            over.charts["precision"],
        ]
    else:
        rows = status_rows(flags_of(project, None, conversation))
        charts = [status_chart(rows)]
    chain = audit.verify(project)
    generated_at = timezone.now()
    scope = f"Conversation {conversation.external_id}" if conversation else f"Period {period}"
    digest_source = "|".join(
        [project.slug, scope, generated_at.isoformat(), str(figures), *(str(f.pk) for f in findings)]
    )
    return {
        "project": project,
        "conversation": conversation,
        "period": period,
        "scope": scope,
        "figures": figures,
        "charts": charts,
        "entries": [_finding_entry(f, calls) for f in findings],
        "chain": chain,
        "generated_at": generated_at,
        "prepared_by": prepared_by,
        "reference": "RCPT-" + hashlib.sha256(digest_source.encode()).hexdigest()[:12].upper(),
        "no_evidence": NO_EVIDENCE,
    }


def render_report_html(context: dict[str, Any]) -> str:
    return render_to_string("reports/audit.html", context)


def render_pdf(
    project: Project,
    *,
    period: Period | None = None,
    conversation: Conversation | None = None,
    prepared_by: str = "",
) -> bytes:
    from weasyprint import HTML

    context = report_context(project, period=period, conversation=conversation, prepared_by=prepared_by)
    return HTML(string=render_report_html(context)).write_pdf()


def render_pdf_for_filters(project: Project, filters: dict[str, Any]) -> bytes:
    """The report a background job was asked for (its filters as the page sent them)."""
    conversation = None
    if filters.get("conversation"):
        conversation = Conversation.objects.get(project=project, pk=int(filters["conversation"]))
    period = None if conversation else period_from(filters)
    return render_pdf(project, period=period, conversation=conversation, prepared_by=filters.get("_by", ""))
