"""A conversation, one turn with its findings and their evidence, and a reviewer's decision."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import services, suite
from ..models import AuditEvent, Conversation, Finding, RunKind, RunStatus, ToolCall, Turn, Verdict
from .access import project_for, require_reviewer
from .highlight import Mark, pieces

DISMISS_REASONS = [
    "The value is in a tool result",
    "The user supplied it",
    "Not a claim (a plan, offer or question)",
    "Other",
]


@login_required
def conversation(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    convo = get_object_or_404(Conversation.objects.filter(project=project), pk=pk)
    turns = list(convo.turns.order_by("index"))
    counts: dict[int, int] = {}
    for finding in Finding.objects.open().flags().filter(conversation=convo):
        counts[finding.turn_id] = counts.get(finding.turn_id, 0) + 1
    context = {
        "project": project,
        "membership": membership,
        "conversation": convo,
        "turns": [{"turn": t, "open_flags": counts.get(t.pk, 0)} for t in turns],
        "run": convo.runs.order_by("-created_at", "-id").first(),
    }
    return render(request, "checks/conversation.html", context)


@login_required
def run_status(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The latest run's state, polled by htmx until the run is finished (then 286 stops it)."""
    project, _ = project_for(request, slug)
    convo = get_object_or_404(Conversation.objects.filter(project=project), pk=pk)
    run = convo.runs.order_by("-created_at", "-id").first()
    response = render(
        request, "checks/conversation.html#run", {"project": project, "conversation": convo, "run": run}
    )
    if run is None or run.is_finished:
        response.status_code = 286
        response["HX-Refresh"] = "true" if request.GET.get("was") in ("pending", "running") else "false"
    return response


@login_required
def turn(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    current = get_object_or_404(Turn.objects.filter(project=project).select_related("conversation"), pk=pk)
    convo = current.conversation
    findings = list(
        Finding.objects.current()
        .filter(turn=current)
        .prefetch_related("decisions__reviewer")
        .order_by("severity", "claim_start", "id")
    )
    calls = _calls_by_id(convo)
    cards = [_card(f, calls) for f in findings]
    messages = list(current.messages.all())
    run = convo.runs.order_by("-created_at", "-id").first()
    done = _latest_done(convo, RunKind.CHECKS)
    judged = _latest_done(convo, RunKind.JUDGE)
    provenance = [
        p for p in (done.summary.get("provenance", []) if done else []) if p.get("turn") == current.index
    ]
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "conversation": convo,
        "turn": current,
        "earlier": Turn.objects.filter(conversation=convo, index__lt=current.index).prefetch_related(
            "messages"
        ),
        "messages": [_message_view(m, current, findings, provenance) for m in messages],
        "grounded": [_grounded(i, item, calls) for i, item in enumerate(provenance)],
        "negative_summary": _turn_summary(done, current.index).get("negative_claims"),
        "judge": _judge_exchanges(judged, current.index),
        "tool_calls": ToolCall.objects.filter(turn=current).order_by("id"),
        "cards": cards,
        "audit": AuditEvent.objects.filter(
            project=project, object_type="finding", object_id__in=[str(f.pk) for f in findings]
        ).select_related("actor")[:50],
        "capability": suite.capability_statement(
            tuple(current.tools_offered) if current.tools_offered is not None else None
        ),
        "neighbours": _neighbours(current),
        "dismiss_reasons": DISMISS_REASONS,
        "run": run,
    }
    return render(request, "checks/turn.html", context)


def _calls_by_id(convo: Conversation) -> dict[str, ToolCall]:
    """Every call of the conversation by id: evidence may point into an earlier turn."""
    return {c.call_id: c for c in ToolCall.objects.filter(turn__conversation=convo) if c.call_id}


def _message_view(
    message: Any, turn: Turn, findings: list[Finding], provenance: list[dict[str, Any]]
) -> dict[str, Any]:
    """A message with the marks to show on it: flagged and grounded claims on the answer."""
    marks: list[Mark] = []
    if message.seq == turn.answer_seq:
        for f in findings:
            if f.claim_start is not None and f.claim_end is not None:
                kind = "flagged" if f.severity == "flag" else "info"
                marks.append(
                    Mark(f.claim_start, f.claim_end, kind, f"{f.code}: {f.explanation}", f"finding-{f.pk}")
                )
        for i, item in enumerate(provenance):
            claim = item.get("claim") or {}
            if claim.get("start") is not None:
                label = f"{item.get('value')}: grounded in a tool result"
                marks.append(Mark(claim["start"], claim["end"], "grounded", label, f"grounded-{i}"))
    return {
        "message": message,
        "is_answer": message.seq == turn.answer_seq,
        "pieces": pieces(message.text, marks),
    }


def _latest_done(convo: Conversation, kind: str) -> Any:
    return convo.runs.filter(kind=kind, status=RunStatus.DONE).order_by("-finished_at", "-id").first()


def _judge_exchanges(run: Any, index: int) -> dict[str, Any] | None:
    """What the judge model was asked about this turn, what it answered, and what it cost."""
    judged = run.summary.get("judge") if run else None
    if not judged:
        return None
    exchanges = [e for e in judged.get("exchanges", []) if e.get("turn") == index]
    return {"model": judged.get("model"), "exchanges": exchanges} if exchanges else None


def _turn_summary(run: Any, index: int) -> dict[str, Any]:
    """What the suite reported about one turn beside its findings (reading figures, delivery)."""
    for entry in run.summary.get("turns", []) if run else []:
        if entry.get("turn") == index:
            return entry
    return {}


SNIPPET_CONTEXT = 80  # characters shown either side of a grounding span


def _grounded(index: int, item: dict[str, Any], calls: dict[str, ToolCall]) -> dict[str, Any]:
    """A grounded value and the tool result that carries it, cut to the span and its context."""
    sources = []
    for evidence in item.get("evidence", []):
        call = calls.get(evidence.get("call_id") or "")
        start, end = evidence.get("start"), evidence.get("end")
        if call is None or start is None or end is None:
            sources.append({"evidence": evidence, "call": call, "pieces": []})
            continue
        left, right = max(0, start - SNIPPET_CONTEXT), min(len(call.result), end + SNIPPET_CONTEXT)
        mark = Mark(start - left, end - left, "evidence", f"Characters {start}–{end} of the result")
        sources.append(
            {
                "evidence": evidence,
                "call": call,
                "pieces": pieces(call.result[left:right], [mark]),
                "cut_left": left > 0,
                "cut_right": right < len(call.result),
            }
        )
    return {"anchor": f"grounded-{index}", "item": item, "sources": sources}


def _card(finding: Finding, calls: dict[str, ToolCall]) -> dict[str, Any]:
    evidence = []
    for item in finding.evidence:
        call = calls.get(item.get("call_id") or "")
        text = call.result if call else ""
        marks = []
        if call and item.get("start") is not None and item.get("end") is not None:
            marks.append(Mark(item["start"], item["end"], "evidence", f"Span {item['start']}–{item['end']}"))
        evidence.append(
            {
                "item": item,
                "call": call,
                "role": _evidence_role(finding, call),
                "receipt": json.dumps(call.receipt, indent=2) if call and call.receipt else "",
                "pieces": pieces(text, marks),
            }
        )
    return {"finding": finding, "evidence": evidence, "decisions": list(finding.decisions.all())}


# How a negative-claim finding uses a read: the ones the claim cites, the reads that say
# otherwise, and the writes that may have changed the data since.
EVIDENCE_ROLES = [("cited", "cited read"), ("contrary", "contrary read"), ("superseded_by", "later write")]


def _evidence_role(finding: Finding, call: ToolCall | None) -> str:
    handle = (call.receipt or {}).get("handle") if call else None
    for key, label in EVIDENCE_ROLES:
        if handle and handle in (finding.details.get(key) or []):
            return label
    return ""


def _neighbours(current: Turn) -> dict[str, Turn | None]:
    """The previous and next flagged turns of the project, in queue order (newest first)."""
    flagged = Turn.objects.filter(project_id=current.project_id).flagged()
    newer = flagged.filter(created_at__gte=current.created_at).exclude(pk=current.pk)
    newer = (
        newer.exclude(created_at=current.created_at, id__lt=current.pk).order_by("created_at", "id").first()
    )
    older = flagged.filter(created_at__lte=current.created_at).exclude(pk=current.pk)
    older = (
        older.exclude(created_at=current.created_at, id__gt=current.pk).order_by("-created_at", "-id").first()
    )
    return {"previous": newer, "next": older}


@login_required
@require_POST
def decide(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    finding = get_object_or_404(Finding.objects.filter(project=project).select_related("turn"), pk=pk)
    verdict = request.POST.get("verdict", "")
    if verdict not in Verdict.values:
        return HttpResponse(
            f"verdict must be one of {', '.join(Verdict.values)}", status=400, content_type="text/plain"
        )
    reason = request.POST.get("reason", "").strip()
    if request.POST.get("reason_text", "").strip():
        reason = request.POST["reason_text"].strip()
    services.record_decision(finding=finding, reviewer=request.user, verdict=verdict, reason=reason[:1000])
    if not request.htmx:
        return redirect(f"{finding.turn.get_absolute_url()}#finding-{finding.pk}")
    finding.refresh_from_db()
    calls = _calls_by_id(finding.conversation)
    context = {
        "project": project,
        "membership": membership,
        "card": _card(finding, calls),
        "dismiss_reasons": DISMISS_REASONS,
    }
    response = render(request, "checks/turn.html#finding", context)
    response["HX-Trigger"] = "decided"
    return response


@login_required
def audit_log(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The audit entries of a turn's findings; refreshed on the page after each decision."""
    project, _ = project_for(request, slug)
    current = get_object_or_404(Turn.objects.filter(project=project), pk=pk)
    ids = [str(i) for i in Finding.objects.filter(turn=current).values_list("pk", flat=True)]
    events = AuditEvent.objects.filter(
        project=project, object_type="finding", object_id__in=ids
    ).select_related("actor")[:50]
    return render(request, "checks/turn.html#audit", {"project": project, "turn": current, "audit": events})
