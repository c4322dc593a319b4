"""A conversation, one turn with its findings and their evidence, and a reviewer's decision."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_required
from django.db.models import Exists, F, OuterRef, Prefetch, Q
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import blind_review, review, suite
from ..evidence_calls import call_for, grouped
from ..models import (
    AuditEvent,
    Comment,
    Conversation,
    Correction,
    CorrectionState,
    Decision,
    Finding,
    FindingStatus,
    Membership,
    Message,
    Project,
    RunKind,
    RunStatus,
    ToolCall,
    Turn,
    Verdict,
)
from ..rendering import render_marked
from . import queue
from .access import project_for, require_reviewer
from .argument_evidence import marked_arguments, possible_sources
from .highlight import Mark, pieces
from .htmx import HtmxHttpRequest
from .queue import DISMISS_REASONS, code_groups
from .results import earlier_messages, evidence_tree, spans_by_result, with_trees


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
        _with_review(Finding.objects.current().filter(turn=current)).order_by("severity", "claim_start", "id")
    )
    # A GET changes nothing: the page itself asks for the hold (POST turn-hold) once it has
    # loaded, and renews it while it stays open.
    calls = _calls_by_id(convo)
    messages = list(current.messages.all())
    earlier = list(
        Turn.objects.filter(conversation=convo, index__lt=current.index).prefetch_related("messages")
    )
    said = ([m for t in earlier for m in t.messages.all()], messages)
    cards = [_card(f, calls, user=request.user, membership=membership, said=said) for f in findings]
    run = convo.runs.order_by("-created_at", "-id").first()
    done = _latest_done(convo, RunKind.CHECKS)
    judged = _latest_done(convo, RunKind.JUDGE)
    provenance = [
        p for p in (done.summary.get("provenance", []) if done else []) if p.get("turn") == current.index
    ]
    grounded = [_grounded(i, item, calls) for i, item in enumerate(provenance)]
    spans = spans_by_result(cards, grounded)  # drawn again where each result stands
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "conversation": convo,
        "turn": current,
        "earlier": earlier,
        "earlier_messages": earlier_messages(project.slug, earlier, spans),
        "messages": with_trees(
            project.slug, [_message_view(m, current, findings, provenance) for m in messages], spans
        ),
        "grounded": grounded,
        "negative_summary": _turn_summary(done, current.index).get("negative_claims"),
        "judge": _judge_exchanges(judged, current.index),
        "tool_calls": ToolCall.objects.filter(turn=current).order_by("id"),
        "cards": cards,
        # Each code once, counted, where the turn has more than one finding of it.
        "code_counts": code_groups([(f, None) for f in findings if f.code != "judge_unavailable"])
        if len(findings) > 1
        else [],
        "audit": _audit_events(project, findings, request.user),
        "capability": suite.capability_statement(
            tuple(current.tools_offered) if current.tools_offered is not None else None
        ),
        **_queue_context(request, project, current),
        "disputes": _disputes(findings, request.user),
        "dismiss_reasons": DISMISS_REASONS,
        "reviewers": review.reviewers_of(project),
        "hold_seconds": review.HOLD_SECONDS,
        "run": run,
    }
    return render(request, "checks/turn.html", context)


def _with_review(findings: Any) -> Any:
    """Findings with what the card shows of their review, fetched in a few queries."""
    return findings.select_related("project", "turn", "assignee", "held_by").prefetch_related(
        Prefetch("decisions", queryset=Decision.objects.select_related("reviewer")),
        Prefetch(
            "corrections",
            queryset=Correction.objects.select_related("author", "approver").order_by("-created_at", "-id"),
        ),
        Prefetch("comments", queryset=Comment.objects.select_related("author")),
    )


def _audit_events(project: Project, findings: list[Finding], user: Any) -> Any:
    """The audit entries of the findings and of their corrections and comments, less those
    that would show ``user`` a decision blind double review still hides from them."""
    corrections = [str(c.pk) for f in findings for c in f.corrections.all()]
    comments = [str(c.pk) for f in findings for c in f.comments.all()]
    return (
        AuditEvent.objects.filter(project=project)
        .filter(
            Q(object_type="finding", object_id__in=[str(f.pk) for f in findings])
            | Q(object_type="correction", object_id__in=corrections)
            | Q(object_type="comment", object_id__in=comments)
        )
        .exclude(blind_review.hidden_events(project, findings, user))
        .select_related("actor")[:50]
    )


def _calls_by_id(convo: Conversation) -> dict[Any, list[ToolCall]]:
    """Every call of the conversation by id, in transcript order: evidence may point into
    an earlier turn, and an id may name several calls (``evidence_calls``)."""
    rows = (
        ToolCall.objects.filter(turn__conversation=convo)
        .exclude(call_id="")
        .annotate(turn_index=F("turn__index"))
        .order_by("turn_index", "id")
    )
    return grouped(rows, lambda c: c.call_id)


def _call(
    calls: dict[Any, list[ToolCall]], item: dict[str, Any], turn: int, value: str | None
) -> ToolCall | None:
    """The call an evidence item (of a finding or grounded value in ``turn``) points into."""
    return call_for(
        calls.get(item.get("call_id") or "", []),
        item,
        turn,
        turn_of=lambda c: c.turn_index,  # type: ignore[attr-defined]
        result_of=lambda c: _pointed_text(c, item),
        value=value,
    )


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
    cut = pieces(message.text, marks)
    rendered = None
    if message.seq == turn.answer_seq and message.text:
        spans, at = [], 0
        for piece in cut:
            if piece.mark is not None:
                spans.append((at, at + len(piece.text), _mark_attributes(piece.mark)))
            at += len(piece.text)
        rendered = render_marked(message.text, spans)
    return {
        "message": message,
        "is_answer": message.seq == turn.answer_seq,
        "pieces": cut,
        "rendered": rendered,
    }


def _mark_attributes(mark: Mark) -> dict[str, str]:
    """A claim's mark as the rendered answer draws it: as the text view's template does."""
    attributes = {
        "class": f"claim claim-{mark.kind}",
        "tabindex": "0",
        "title": mark.label,
        "aria-label": mark.label,
    }
    if mark.anchor:
        attributes["data-target"] = mark.anchor
    return attributes


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


def _pointed_text(call: ToolCall, item: dict[str, Any]) -> str:
    """The text an evidence item's offsets count in: the call's result, or its arguments
    where a successful query backs the value (``of: arguments``)."""
    return call.arguments if item.get("of") == "arguments" else call.result


def _grounded(index: int, item: dict[str, Any], calls: dict[Any, list[ToolCall]]) -> dict[str, Any]:
    """A grounded value and the tool result that carries it, cut to the span and its context."""
    sources = []
    for evidence in item.get("evidence", []):
        call = _call(calls, evidence, item.get("turn", 0), item.get("value"))
        start, end = evidence.get("start"), evidence.get("end")
        if call is None or start is None or end is None:
            sources.append({"evidence": evidence, "call": call, "pieces": []})
            continue
        text = _pointed_text(call, evidence)
        left, right = max(0, start - SNIPPET_CONTEXT), min(len(text), end + SNIPPET_CONTEXT)
        where = "arguments" if evidence.get("of") == "arguments" else "result"
        mark = Mark(start - left, end - left, "evidence", f"Characters {start}–{end} of the {where}")
        sources.append(
            {
                "evidence": evidence,
                "call": call,
                "pieces": pieces(text[left:right], [mark]),
                "cut_left": left > 0,
                "cut_right": right < len(text),
            }
        )
    return {"anchor": f"grounded-{index}", "item": item, "sources": sources}


def _card(
    finding: Finding,
    calls: dict[Any, list[ToolCall]],
    *,
    user: Any,
    membership: Membership,
    said: tuple[list[Any], list[Any]] | None = None,
) -> dict[str, Any]:
    """What a finding's card shows. ``said`` is the messages of the earlier turns and of the
    finding's own, where an argument's value could have come from (read here when None)."""
    evidence = []
    for position, item in enumerate(finding.evidence):
        call = _call(calls, item, finding.turn.index, finding.value)
        evidence.append(
            {
                "item": item,
                "call": call,
                "role": _evidence_role(finding, call) or _record_role(finding, position),
                "receipt": json.dumps(call.receipt, indent=2) if call and call.receipt else "",
                "tree": evidence_tree(finding.project.slug, call, item, f"finding-{finding.pk}"),
            }
        )
    seen = blind_review.seen_by(finding, user, finding.project)
    corrections = seen.corrections
    waiting = next((c for c in corrections if c.state == CorrectionState.PROPOSED), None)
    shown = waiting or (corrections[0] if corrections else None)
    draft = shown.text if shown else review.revision_for(finding)
    holder = review.holder(finding)
    argument = _argument(finding, calls, said)
    votes: dict[Any, Any] = {}
    for decision in sorted(finding.decisions.all(), key=lambda d: (d.created_at, d.pk)):
        votes[decision.reviewer_id] = decision  # each reviewer's latest
    split = review.disputants({reviewer: d.verdict for reviewer, d in votes.items()})
    return {
        "finding": finding,
        # A split finding: both sides, each with its reason and any correction its author
        # proposed, side by side for whoever settles it; those who split may not.
        "dispute": [
            {
                "decision": votes[reviewer],
                "correction": _proposed_by(corrections, votes[reviewer].reviewer_id),
            }
            for reviewer in split
        ],
        "disputant": user.pk in split,
        "argument": argument,
        # An action finding: the calls its turn ran, each a link to where it stands.
        "turn_calls": [c for found in calls.values() for c in found if c.turn_id == finding.turn_id]
        if finding.checker == "action_claims"
        else [],
        "evidence": evidence,
        "derivation": (finding.details or {}).get("derivation"),
        "decisions": seen.decisions,
        "hidden_decisions": seen.hidden,
        "blind": seen.blind,
        "corrections": corrections,
        "correction": shown,
        "waiting": waiting,
        "draft": draft,
        "diff": review.diff(finding.turn.answer, draft) if draft else [],
        # Under blind review a correction is proposed by deciding (review.BLIND_PROPOSAL).
        "may_edit": membership.can_review and (waiting.author_id == user.pk if waiting else not seen.blind),
        "may_approve": membership.can_review and waiting is not None and waiting.author_id != user.pk,
        "is_author": waiting is not None and waiting.author_id == user.pk,
        "comments": list(finding.comments.all()),
        "holder": holder if holder is not None and holder.pk != user.pk else None,
        "mine": holder is not None and holder.pk == user.pk,
    }


def _argument(
    finding: Finding, calls: dict[Any, list[ToolCall]], said: tuple[list[Any], list[Any]] | None
) -> dict[str, Any] | None:
    """For a finding about a call's argument: the call, its arguments with the value marked,
    and the places on the page that could have supplied it."""
    details = finding.details or {}
    call_id, path = details.get("call_id"), details.get("path")
    if finding.checker != "arguments" or not call_id or not path:
        return None
    call = next((c for c in calls.get(call_id, []) if c.turn_id == finding.turn_id), None)
    if call is None:
        return None
    if said is None:
        turn = finding.turn
        earlier = Message.objects.filter(turn__conversation=turn.conversation, turn__index__lt=turn.index)
        said = (list(earlier.order_by("turn__index", "seq")), list(turn.messages.all()))
    label = f"{path} = {finding.value}" if finding.value else path
    return {
        "call": call,
        "path": path,
        "pieces": marked_arguments(call.arguments, path, label),
        "sources": possible_sources(*said, finding.conversation.system, call.request_seq),
        "found_in": details.get("found_in", ""),
    }


def _proposed_by(corrections: list[Correction], author_id: int) -> Correction | None:
    return next((c for c in corrections if c.author_id == author_id), None)


# How a negative-claim finding uses a read: the ones the claim cites, the reads that say
# otherwise, and the writes that may have changed the data since.
EVIDENCE_ROLES = [("cited", "cited read"), ("contrary", "contrary read"), ("superseded_by", "later write")]


def _evidence_role(finding: Finding, call: ToolCall | None) -> str:
    handle = (call.receipt or {}).get("handle") if call else None
    for key, label in EVIDENCE_ROLES:
        if handle and handle in (finding.details.get(key) or []):
            return label
    return ""


def _record_role(finding: Finding, position: int) -> str:
    """Which record an item of a value_of_other_record finding shows: the one the answer
    named, then the one whose field holds the value."""
    if finding.code != "value_of_other_record":
        return ""
    details = finding.details or {}
    if position == 0:
        return f"record named: {details.get('record', '?')}"
    return f"record holding the value: {details.get('other_record', '?')}"


def _queue_context(request: HttpRequest, project: Project, current: Turn) -> dict[str, Any]:
    """Where the turn stands in the queue the reviewer came from: the queue's filters ride
    along in the query string (a saved view is its query string too), so previous, next and
    the way back stay within them until the reviewer follows a link without them."""
    filters = queue.read_filters(request.GET)
    query = queue.filter_query(filters)
    near = queue.neighbours(project, filters, request.user, current)
    return {
        "neighbours": near,
        "queue_query": query,
        "queue_filters": queue.describe(filters) if query else [],
        "queue_url": queue.queue_return_url(project, query, near["previous"], current),
    }


def _disputes(findings: list[Finding], user: Any) -> list[dict[str, Any]]:
    """The turn's disputed findings, each with who disagree and whether ``user`` is one of
    them (then it is a third reviewer's to settle). Read from the prefetched decisions."""
    out = []
    for finding in findings:
        votes: dict[Any, str] = {}
        for decision in sorted(finding.decisions.all(), key=lambda d: (d.created_at, d.pk)):
            votes[decision.reviewer] = decision.verdict
        split = review.disputants({reviewer.pk: verdict for reviewer, verdict in votes.items()})
        if split:
            names = sorted(r.username for r in votes)
            out.append({"finding": finding, "names": names, "mine": user.pk in split})
    return out


def _finding_for(request: HttpRequest, slug: str, pk: int) -> tuple[Project, Membership, Finding]:
    """A finding of a project the user may review; 404 outside it, 403 for a viewer."""
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    finding = get_object_or_404(_with_review(Finding.objects.filter(project=project)), pk=pk)
    return project, membership, finding


def _answer(
    request: HtmxHttpRequest,
    project: Project,
    membership: Membership,
    finding: Finding,
    *,
    trigger: str = "decided",
) -> HttpResponse:
    """The finding's card again for htmx; without it, back to the turn page at the card."""
    if not request.htmx:
        return redirect(f"{_turn_again(request, finding.turn)}#finding-{finding.pk}")
    fresh = _with_review(Finding.objects.filter(pk=finding.pk)).get()
    context = {
        "project": project,
        "membership": membership,
        "card": _card(fresh, _calls_by_id(fresh.conversation), user=request.user, membership=membership),
        "dismiss_reasons": DISMISS_REASONS,
        "reviewers": review.reviewers_of(project),
    }
    response = render(request, "checks/turn.html#finding", context)
    response["HX-Trigger"] = trigger
    return response


def _turn_again(request: HttpRequest, turn: Turn) -> str:
    """The turn's page, with the queue filters it was opened with (read from the page that
    sent the form, a page of this same turn), so a form sent without htmx stays in them."""
    url = turn.get_absolute_url()
    came_from = urlsplit(request.headers.get("Referer", ""))
    if came_from.path != url or came_from.netloc not in ("", request.get_host()):
        return url
    query = queue.filter_query(queue.read_filters(QueryDict(came_from.query)))
    return f"{url}?{query}" if query else url


def _refused(exc: review.ReviewError) -> HttpResponse:
    """A refusal as plain text: receipts.js shows it beside the form that asked."""
    return HttpResponse(str(exc), status=exc.status_code, content_type="text/plain; charset=utf-8")


@login_required
@require_POST
def decide(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership, finding = _finding_for(request, slug, pk)
    # "Confirm and next" sends its verdict under ``then_next``: decide, then go on.
    then_next = "then_next" in request.POST
    verdict = request.POST.get("then_next") or request.POST.get("verdict", "")
    if verdict not in (*Verdict.values, review.NEEDS_CORRECTION):
        return HttpResponse(
            f"verdict must be one of {', '.join([*Verdict.values, review.NEEDS_CORRECTION])}",
            status=400,
            content_type="text/plain",
        )
    reason = request.POST.get("reason", "").strip()
    if request.POST.get("reason_text", "").strip():
        reason = request.POST["reason_text"].strip()
    if verdict == Verdict.DISMISSED and not reason:
        return HttpResponse(
            "Choose a reason to dismiss, or say why in your words.", status=400, content_type="text/plain"
        )
    try:
        review.record_decision(finding=finding, reviewer=request.user, verdict=verdict, reason=reason[:1000])
    except review.ReviewError as exc:
        return _refused(exc)
    if then_next:
        where = _next_item(request, project, finding)
        if not request.htmx:
            return redirect(where)
        here, _, anchor = where.partition("#")
        if anchor and here == _turn_again(request, finding.turn):
            # The next flag is on this page: the card comes back decided and the page moves
            # on to that flag (receipts.js), with no reload.
            trigger = json.dumps({"decided": "", "goto-finding": {"id": anchor}})
            return _answer(request, project, membership, finding, trigger=trigger)
        response = HttpResponse(status=204)
        response["HX-Redirect"] = where
        return response
    return _answer(request, project, membership, finding)


def _next_item(request: HttpRequest, project: Project, finding: Finding) -> str:
    """Where a reviewer goes on to after deciding ``finding``: the next flag of the turn still
    open to them, else the next turn of the queue they came from, else that queue."""
    turn = finding.turn
    here = _turn_again(request, turn)
    decided = Decision.objects.filter(reviewer=request.user.pk, finding=OuterRef("pk"))
    rest = (
        Finding.objects.current()
        .filter(turn=turn, status=FindingStatus.OPEN, severity="flag")
        .exclude(pk=finding.pk)
        .exclude(Exists(decided))
        .order_by("severity", "claim_start", "id")
        .first()
    )
    if rest is not None:
        return f"{here}#finding-{rest.pk}"
    query = urlsplit(here).query
    filters = queue.read_filters(QueryDict(query))
    following = queue.neighbours(project, filters, request.user, turn)["next"]
    if following is None:
        return queue.queue_return_url(project, query, None, turn)
    url = following.get_absolute_url()
    return f"{url}?{query}" if query else url


@login_required
@require_POST
def save_correction(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Proposes a correction of the finding, or saves the author's edit of the waiting one."""
    project, membership, finding = _finding_for(request, slug, pk)
    try:
        review.save_correction(finding=finding, user=request.user, text=request.POST.get("text", ""))
    except review.ReviewError as exc:
        return _refused(exc)
    return _answer(request, project, membership, finding)


@login_required
@require_POST
def decide_correction(request: HtmxHttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    """A second reviewer approves or rejects a waiting correction; never its author."""
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    correction = get_object_or_404(Correction.objects.filter(project=project), pk=pk)
    note = request.POST.get("note", "")
    try:
        if action == "approve":
            review.approve_correction(correction=correction, approver=request.user, note=note)
        else:
            review.reject_correction(correction=correction, approver=request.user, note=note)
    except review.ReviewError as exc:
        return _refused(exc)
    finding = _with_review(Finding.objects.filter(pk=correction.finding_id)).get()
    return _answer(request, project, membership, finding)


@login_required
@require_POST
def comment(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership, finding = _finding_for(request, slug, pk)
    try:
        review.add_comment(finding=finding, author=request.user, text=request.POST.get("text", ""))
    except review.ReviewError as exc:
        return _refused(exc)
    return _answer(request, project, membership, finding)


@login_required
@require_POST
def assign(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership, finding = _finding_for(request, slug, pk)
    value = request.POST.get("assignee", "")
    people = {u.username: u for u in review.reviewers_of(project)}
    if value == "me":
        value = request.user.username
    if value and value not in people:
        return HttpResponse(
            f"{value!r} is not a reviewer of this project.", status=400, content_type="text/plain"
        )
    try:
        review.assign(finding=finding, assignee=people.get(value), actor=request.user)
    except review.ReviewError as exc:
        return _refused(exc)
    return _answer(request, project, membership, finding)


@login_required
@require_POST
def hold(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Keeps the turn's open findings held while its page stays open (htmx polls this)."""
    current = _reviewers_turn(request, slug, pk)
    held = review.hold(findings=Finding.objects.open().filter(turn=current), user=request.user)
    return HttpResponse(status=204, headers={"X-Held": ",".join(map(str, held))})


@login_required
@require_POST
def release(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Lets go of the turn's findings this reviewer holds: sent as the page is left."""
    current = _reviewers_turn(request, slug, pk)
    review.release(findings=Finding.objects.filter(turn=current), user=request.user)
    return HttpResponse(status=204)


def _reviewers_turn(request: HttpRequest, slug: str, pk: int) -> Turn:
    """A turn of a project the user reviews; 404 outside it, 403 for a viewer."""
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    return get_object_or_404(Turn.objects.filter(project=project), pk=pk)


@login_required
def audit_log(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The audit entries of a turn's findings; refreshed on the page after each decision."""
    project, _ = project_for(request, slug)
    current = get_object_or_404(Turn.objects.filter(project=project), pk=pk)
    findings = list(_with_review(Finding.objects.filter(turn=current)))
    events = _audit_events(project, findings, request.user)
    return render(request, "checks/turn.html#audit", {"project": project, "turn": current, "audit": events})
