"""The project's audit log as one page: every event of its chain, newest first, filtered by
who acted and what kind of event it was, paged by event id.

Whether the chain verifies is told in two steps. The page itself only compares the newest
event with the head recorded outside the database (one file read): cheap, and it shows the
newest events deleted or written past the head. Walking the whole chain reads every event,
so it runs when someone asks for it (the verify fragment), not on every page."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpResponse
from django.shortcuts import render

from .. import audit, blind_review
from ..filters import is_row_id
from ..models import AuditEvent, Correction, Decision, Finding, Project
from . import history
from .access import project_for
from .conversations import text_param
from .htmx import HtmxHttpRequest

PAGE_SIZE = 100
MAX_FILTER = 150


@login_required
def audit_log(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    actor = text_param(request.GET, "actor", MAX_FILTER)
    kind = text_param(request.GET, "kind", MAX_FILTER)
    events = AuditEvent.objects.filter(project=project).order_by("-id")
    if actor:
        events = events.filter(actor_name=actor)
    if kind:
        # A kind is a verb ("finding.confirmed") or the object it acts on ("finding").
        events = events.filter(verb=kind) if "." in kind else events.filter(verb__startswith=f"{kind}.")
    after = request.GET.get("after", "")
    if is_row_id(after):
        events = events.filter(id__lt=int(after))
    page = list(events[: PAGE_SIZE + 1])
    has_more = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    next_cursor = str(page[-1].pk) if has_more else ""
    shown = _visible(project, page, request.user)
    query = urlencode([(k, v) for k, v in (("actor", actor), ("kind", kind)) if v])
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "events": shown,
        "actor": actor,
        "kind": kind,
        "query": query,
        "next_cursor": next_cursor,
        "actors": _actors(project),
        "kinds": KINDS,
        "head": head_state(project),
        # The objects that have a history page.
        "linkable": history.KINDS,
    }
    template = "checks/audit_log.html"
    if request.htmx and not request.htmx.boosted and after:
        template += "#rows"
    return render(request, template, context)


@login_required
def verify_chain(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The whole chain walked from its first event, as ``manage.py audit verify`` walks it."""
    project, membership = project_for(request, slug)
    context = {"project": project, "membership": membership, "chain": audit.verify(project)}
    template = "checks/audit_chain.html" if request.htmx else "checks/audit_verify.html"
    return render(request, template, context)


# The kinds of event the filter offers: what the events act on (the first part of a verb),
# then the verbs reviewers look for most. Any other verb in the URL works too.
KINDS = [
    "finding",
    "correction",
    "comment",
    "member",
    "apikey",
    "webhook",
    "project",
    "view",
    "export",
    "report",
    "finding.confirmed",
    "finding.dismissed",
    "finding.assigned",
]


def _actors(project: Project) -> list[str]:
    """Who may appear in the log: the project's members (its log is theirs), by name."""
    return sorted(project.memberships.values_list("user__username", flat=True))


def head_state(project: Project) -> dict[str, Any]:
    """The newest event against the head recorded outside the database, without a walk."""
    newest = AuditEvent.objects.filter(project=project).order_by("-id").values_list("id", "hash").first()
    try:
        head = audit.read_head(project.pk)
    except audit.HeadUnreadable as exc:
        return {"ok": False, "said": f"The recorded head cannot be read ({exc})."}
    if head is None:
        return {"ok": None, "said": "No head is recorded for this log yet; verify the chain to check it."}
    if newest is None or newest[0] < head.event:
        return {
            "ok": False,
            "said": f"The newest events were deleted: the recorded head is event {head.event}.",
        }
    if newest[0] > head.event:
        return {"ok": False, "said": f"The log runs past its recorded head (event {head.event})."}
    if newest[1] != head.hash:
        return {"ok": False, "said": f"Event {head.event} is not the one recorded as the head."}
    return {"ok": True, "said": f"The newest event, {head.event}, is the head recorded outside the database."}


def _visible(project: Project, events: list[AuditEvent], user: Any) -> list[AuditEvent]:
    """The events less those blind double review still hides from ``user``: the same rule as
    a turn's log and an object's history (blind_review.hidden_events)."""
    if not project.double_review:
        return events
    finding_ids = {int(e.object_id) for e in events if e.object_type == "finding" and is_row_id(e.object_id)}
    correction_ids = [
        int(e.object_id) for e in events if e.object_type == "correction" and is_row_id(e.object_id)
    ]
    finding_ids |= set(
        Correction.objects.filter(project=project, pk__in=correction_ids).values_list("finding_id", flat=True)
    )
    findings = Finding.objects.filter(project=project, pk__in=finding_ids).prefetch_related(
        Prefetch("decisions", queryset=Decision.objects.only("finding_id", "reviewer_id")), "corrections"
    )
    hidden = set(
        AuditEvent.objects.filter(pk__in=[e.pk for e in events])
        .filter(blind_review.hidden_events(project, findings, user))
        .values_list("pk", flat=True)
    )
    return [e for e in events if e.pk not in hidden]
