"""The projects a user belongs to, and a project's triage queue of flagged turns."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Exists, OuterRef, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..models import Finding, FindingStatus, Project, Turn
from .access import project_for

PAGE_SIZE = 50
STATUSES = ["open", "confirmed", "dismissed", "all"]


@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = Project.objects.for_user(request.user).annotate(
        open_flags=Count(
            "finding",
            filter=Q(
                finding__status=FindingStatus.OPEN, finding__severity="flag", finding__withdrawn_at=None
            ),
        )
    )
    return render(request, "checks/home.html", {"projects": projects})


@login_required
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    filters = _filters(request)
    findings = Finding.objects.current().flags().filter(project=project)
    if filters["status"] != "all":
        findings = findings.filter(status=filters["status"])
    if filters["checker"]:
        findings = findings.filter(checker=filters["checker"])
    if filters["code"]:
        findings = findings.filter(code=filters["code"])

    turns = (
        Turn.objects.filter(project=project)
        .filter(Exists(findings.filter(turn=OuterRef("pk"))))
        .select_related("conversation")
        .order_by("-created_at", "-id")
    )
    cursor = _parse_cursor(request.GET.get("after", ""))
    if cursor:
        created_at, pk = cursor
        turns = turns.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk))
    page = list(turns[: PAGE_SIZE + 1])
    has_more = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    by_turn: dict[int, list[Finding]] = {}
    for finding in findings.filter(turn__in=page).order_by("claim_start", "id"):
        by_turn.setdefault(finding.turn_id, []).append(finding)
    rows = [{"turn": turn, "findings": by_turn.get(turn.pk, [])} for turn in page]
    next_cursor = _cursor(page[-1]) if has_more else ""

    counts = dict(
        Finding.objects.current()
        .flags()
        .filter(project=project)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "rows": rows,
        "filters": filters,
        "next_cursor": next_cursor,
        "counts": {status: counts.get(status, 0) for status in FindingStatus.values},
        "statuses": STATUSES,
        "checkers": _distinct(project, "checker"),
        "codes": _distinct(project, "code"),
    }
    template = "checks/queue.html"
    if request.htmx and not request.htmx.boosted:
        template += "#rows" if request.GET.get("after") else "#results"
    return render(request, template, context)


def _filters(request: HttpRequest) -> dict[str, str]:
    status = request.GET.get("status", "open")
    return {
        "status": status if status in STATUSES else "open",
        "checker": request.GET.get("checker", "")[:50],
        "code": request.GET.get("code", "")[:50],
    }


def _distinct(project: Project, field: str) -> list[str]:
    return list(
        Finding.objects.filter(project=project).order_by(field).values_list(field, flat=True).distinct()
    )


# Keyset pagination: the cursor is the (created_at, id) of the last row shown, in a form that
# needs no escaping in a URL. A bad cursor starts from the top rather than failing.
CURSOR_TIME = "%Y%m%dT%H%M%S%f"


def _cursor(turn: Turn) -> str:
    return f"{turn.created_at.astimezone(UTC).strftime(CURSOR_TIME)}_{turn.pk}"


def _parse_cursor(value: str) -> tuple[datetime, int] | None:
    stamp, _, pk = value.partition("_")
    try:
        return datetime.strptime(stamp, CURSOR_TIME).replace(tzinfo=UTC), int(pk)
    except ValueError:
        return None
