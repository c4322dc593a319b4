"""The projects a user belongs to, and a project's triage queue: flagged turns and their
findings, filtered by what the URL says, with saved views, bulk actions and progress."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from .. import review
from ..filters import ALL, FindingFilter, disputed_findings, is_row_id
from ..finding_titles import title_of
from ..models import Decision, Finding, FindingStatus, Project, SavedView, Turn, Verdict
from .access import project_for, require_reviewer
from .filter_form import filter_fields
from .htmx import HtmxHttpRequest

PAGE_SIZE = 50
STATUSES = ["open", "confirmed", "dismissed", "all"]
SEVERITIES = ["flag", "info", "all"]
# What the queue shows when its URL says nothing: the open flags.
DEFAULTS = FindingFilter(status="open", severity="flag")


# A project's open flags, counted up to COUNT_CAP + 1 from the index of current findings: an
# exact count read every open flag of every project on each visit (0.3 s at a million turns).
OPEN_FLAGS = (
    "SELECT COUNT(*) FROM (SELECT 1 FROM checks_finding f WHERE f.project_id = checks_project.id"
    " AND f.status = 'open' AND f.severity = 'flag' AND f.withdrawn_at IS NULL LIMIT %s) capped"
)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = Project.objects.for_user(request.user).annotate(
        open_flags=RawSQL(OPEN_FLAGS, [COUNT_CAP + 1])  # noqa: S611 (constant SQL)
    )
    rows = [(project, count_label(project.open_flags)) for project in projects]
    return render(request, "checks/home.html", {"projects": rows})


def read_filters(query: Any) -> FindingFilter:
    """The queue's filters as the URL gives them; a value it cannot read keeps its default
    (open flags), so an old bookmark or saved view still opens."""
    return FindingFilter.parse(query, defaults=DEFAULTS, strict=False)


def filter_query(filters: FindingFilter) -> str:
    """The filters as a query string, leaving out what is at the queue's default."""
    return filters.query(DEFAULTS)


QUEUE_ROW_FIELDS = [
    "project_id",
    "conversation_id",
    "index",
    "answer",
    "created_at",
    "conversation__project_id",
    "conversation__title",
    "conversation__external_id",
    "conversation__agent_name",
    "conversation__agent_model",
]


@login_required
def queue(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    filters = read_filters(request.GET)
    findings = filters.findings(project, user=request.user)

    turns = (
        queue_turns(project, findings)
        .select_related("conversation")
        # What a row shows: a conversation's document and a turn's tools are large JSON
        # that the queue never reads (loading them took a quarter of the page's time).
        .only(*QUEUE_ROW_FIELDS)
    )
    cursor = _parse_cursor(request.GET.get("after", ""))
    if cursor:
        turns = _older(turns, *cursor)
    page = list(turns[: PAGE_SIZE + 1])
    has_more = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    # Each turn's findings, each with who holds it now (None when nobody does).
    by_turn: dict[int, list[tuple[Finding, Any]]] = {}
    now = timezone.now()
    for finding in (
        findings.filter(turn__in=page)
        .select_related("assignee", "held_by")
        .defer("evidence", "details", "claim_text", "correction")
        .order_by("claim_start", "id")
    ):
        by_turn.setdefault(finding.turn_id, []).append((finding, review.holder(finding, now=now)))
    shown = [f.pk for found in by_turn.values() for f, _ in found]
    split = set(disputed_findings(project).filter(finding__in=shown).values_list("finding", flat=True))
    rows = [
        {
            "turn": turn,
            "findings": by_turn.get(turn.pk, []),
            "codes": code_groups(by_turn.get(turn.pk, [])),
            "disputed": any(f.pk in split for f, _ in by_turn.get(turn.pk, [])),
        }
        for turn in page
    ]
    next_cursor = _cursor(page[-1]) if has_more else ""

    counts = status_counts(replace(filters, status=ALL).findings(project, user=request.user))
    query = filter_query(filters)
    reviewers = review.reviewers_of(project)  # for the assignee filter and the bulk assignment
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "rows": rows,
        "filters": filters,
        "query": query,
        "next_cursor": next_cursor,
        "counts": {status: counts.get(status, 0) for status in FindingStatus.values},
        "status_links": _status_links(filters, counts),
        # The filter form's lists, drawn by the same fields as the exports page's.
        **filter_fields(project, filters, reviewers),
        "reviewers": reviewers,
        "saved_views": SavedView.objects.filter(project=project, user_id=membership.user_id),
        "dismiss_reasons": DISMISS_REASONS,
        # Came back from a turn part-way down: the rows start there, and the top is a link away.
        "resumed": bool(cursor),
        "undo_offers": _undo_offers(request, project),
    }
    template = "checks/queue.html"
    if request.htmx and not request.htmx.boosted:
        template += "#rows" if request.GET.get("after") else "#results"
    return render(request, template, context)


def code_groups(findings: list[tuple[Finding, Any]]) -> list[dict[str, Any]]:
    """A turn's findings as its queue row shows them: one badge a code and severity, in the
    order they first stand, counted where a code repeats ("×5"), with its plain title."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for finding, _ in findings:
        group = groups.setdefault(
            (finding.code, finding.severity),
            {
                "code": finding.code,
                "severity": finding.severity,
                "title": title_of(finding.code),
                "statuses": set(),
                "count": 0,
            },
        )
        group["count"] += 1
        group["statuses"].add(finding.status)
    return list(groups.values())


def queue_turns(project: Project, findings: QuerySet[Finding]) -> QuerySet[Turn]:
    """The turns holding any of ``findings``, in the queue's order (newest first). The turn
    page walks the same order, so previous and next are the queue's own neighbours."""
    return (
        Turn.objects.filter(project=project)
        .filter(Exists(findings.filter(turn=OuterRef("pk"))))
        .order_by("-created_at", "-id")
    )


def _older(turns: QuerySet[Turn], created_at: datetime, pk: int) -> QuerySet[Turn]:
    """The turns after (created_at, pk) in the queue's order."""
    # The first condition adds nothing logically, but it is the one the (project, created_at)
    # index can start from; with the OR alone every newer turn is read.
    return turns.filter(created_at__lte=created_at).filter(
        Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk)
    )


def _newer(turns: QuerySet[Turn], created_at: datetime, pk: int) -> QuerySet[Turn]:
    """The turns before (created_at, pk) in the queue's order, nearest first."""
    return (
        turns.filter(created_at__gte=created_at)
        .filter(Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=pk))
        .order_by("created_at", "id")
    )


def neighbours(project: Project, filters: FindingFilter, user: Any, current: Turn) -> dict[str, Turn | None]:
    """The turns just before and after ``current`` in the queue these filters make, one keyset
    step each way. ``current`` need not match them any more (it may have just been decided):
    its place in the order is enough."""
    turns = queue_turns(project, filters.findings(project, user=user)).select_related("conversation")
    at = (current.created_at, current.pk)
    return {"previous": _newer(turns, *at).first(), "next": _older(turns, *at).first()}


def queue_return_url(project: Project, query: str, previous: Turn | None, current: Turn) -> str:
    """The queue these filters make, starting at ``current`` (after the turn before it), with
    its row as the place to go on from."""
    params = [query] if query else []
    if previous is not None:
        params.append(f"after={_cursor(previous)}")
    return _queue_url(project, "&".join(params)) + f"#row-{current.pk}"


DISMISS_REASONS = [
    "The value is in a tool result",
    "The user supplied it",
    "Not a claim (a plan, offer or question)",
    "Other",
]


# Each status is counted up to this many findings and shown as "1,000+" beyond it. An exact
# count reads every matching finding (hundreds of thousands at a million turns, and through
# a join for the agent and model filters); a capped one stops at the cap, and a reviewer's
# choice is the same at 1,000 as at 100,000. The overview counts them exactly, for a period.
COUNT_CAP = 1_000


def status_counts(findings: QuerySet[Finding]) -> dict[str, int]:
    """Findings per status, each counted up to COUNT_CAP + 1 (more than the cap means "over")."""
    # No ordering: a finding's default order joins its turn and sorts every row before the cap.
    findings = findings.order_by()
    return {
        status: findings.filter(status=status)[: COUNT_CAP + 1].count() for status in FindingStatus.values
    }


def count_label(n: int) -> str:
    return f"{COUNT_CAP:,}+" if n > COUNT_CAP else f"{n:,}"


def _status_links(filters: FindingFilter, counts: dict[str, int]) -> list[dict[str, Any]]:
    total = sum(min(n, COUNT_CAP) for n in counts.values())
    over = any(n > COUNT_CAP for n in counts.values())
    links = []
    for status in STATUSES:
        query = filter_query(replace(filters, status=status))
        n = total if status == "all" else counts.get(status, 0)
        # Past the cap, "all" says what each capped status says: more than the cap. The sum
        # of the capped counts ("1,018+") read as a figure, and an odd one.
        label = count_label(COUNT_CAP + 1) if status == "all" and over else count_label(n)
        links.append({"status": status, "n": label, "query": query, "current": filters.status == status})
    return links


@login_required
def queue_progress(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The reviewers' progress table. The queue keeps it folded and asks for it only when a
    reviewer opens it: its counts read every decision of the project, which no queue page
    otherwise needs."""
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    template = "checks/queue_progress.html"
    if request.htmx:
        template += "#table"
    return render(request, template, {"project": project, "progress": progress(project)})


def progress(project: Project) -> list[dict[str, Any]]:
    """Per reviewer: open findings assigned to them, and what they decided (today, in all)."""
    since = timezone.now() - timedelta(days=1)
    assigned = dict(
        Finding.objects.open()
        .filter(project=project, assignee__isnull=False)
        .order_by()
        .values_list("assignee")
        .annotate(n=Count("*"))
        .values_list("assignee", "n")
    )
    decided = dict(
        Decision.objects.filter(project=project)
        .values_list("reviewer")
        .annotate(n=Count("*"))
        .values_list("reviewer", "n")
    )
    recent = dict(
        Decision.objects.filter(project=project, created_at__gte=since)
        .values_list("reviewer")
        .annotate(n=Count("*"))
        .values_list("reviewer", "n")
    )
    return [
        {
            "user": user,
            "assigned_open": assigned.get(user.pk, 0),
            "decided": decided.get(user.pk, 0),
            "decided_today": recent.get(user.pk, 0),
        }
        for user in review.reviewers_of(project)
    ]


# --- bulk actions and saved views ----------------------------------------------------------


@login_required
@require_POST
def bulk(request: HttpRequest, slug: str) -> HttpResponse:
    """Confirm, dismiss or assign the findings of the selected turns, or everything the
    filters match; each finding is decided (and audited) on its own.

    The queue's form asks first (``preview``): a page says how many findings the action will
    change and sends the same form again to do it. Once done, the queue offers to undo it
    for RECEIPTS_BULK_UNDO_SECONDS (``action=undo``)."""
    project, membership = project_for(request, slug)
    require_reviewer(membership)
    query = request.POST.get("query", "")
    action = request.POST.get("action", "")
    if action == "undo":
        return _undo(request, project, query)
    findings = read_filters(QueryDict(query)).findings(project, user=request.user)
    turn_ids: list[int] = []
    if request.POST.get("scope") != "all":
        turn_ids = [int(v) for v in request.POST.getlist("turn") if is_row_id(v)]
        if not turn_ids:
            return _back(
                request, project, query, "Select at least one turn, or choose everything that matches."
            )
        findings = findings.filter(turn_id__in=turn_ids)
    if action not in (*Verdict.values, "assign", "round_robin"):
        return HttpResponse("action must be confirmed, dismissed, assign, round_robin or undo", status=400)
    reason = request.POST.get("reason_text", "").strip() or request.POST.get("reason", "").strip()
    if action == Verdict.DISMISSED and not reason:
        return _back(request, project, query, "Give a reason to dismiss.")
    try:
        assignee = (
            _member_user(project, request.POST.get("assignee", ""), request.user)
            if action == "assign"
            else None
        )
        if request.POST.get("preview"):
            return _preview(request, project, query, findings, action, reason, assignee, turn_ids)
        if action in Verdict.values:
            result = review.bulk_decide(
                findings=findings, reviewer=request.user, verdict=action, reason=reason
            )
            said = f"{_findings(result.done)} {action}"
            batch = result.batch
        elif action == "assign":
            result = review.bulk_assign(findings=findings, assignee=assignee, actor=request.user)
            said = f"{_findings(result.done)} assigned to " + (assignee.username if assignee else "nobody")
            batch = result.batch
        else:
            batch = review.new_batch()
            given = review.assign_round_robin(
                project=project, findings=findings, actor=request.user, batch=batch
            )
            said = "Assigned in turn: " + (
                ", ".join(f"{k} {v}" for k, v in given.items()) or "nothing matched"
            )
            result = None
            batch = batch if given else ""
    except review.ReviewError as exc:
        return _back(request, project, query, str(exc))
    if result is not None and result.skipped:
        said += (
            f"; {result.skipped} skipped (already so, open on another reviewer's screen,"
            " or disputed by you and another reviewer)"
        )
    # One banner: an action that can be undone says what it did beside its Undo button.
    if batch:
        _offer_undo(request, project, batch, said)
    else:
        messages.success(request, said + ".")
    return redirect(_queue_url(project, query))


def _findings(n: int) -> str:
    return f"{n:,} finding{'s' if n != 1 else ''}"


ACTION_WORDS = {
    "confirmed": "Confirm",
    "dismissed": "Dismiss",
    "assign": "Assign",
    "round_robin": "Assign round-robin",
}


def _preview(
    request: HttpRequest,
    project: Project,
    query: str,
    findings: QuerySet[Finding],
    action: str,
    reason: str,
    assignee: Any,
    turn_ids: list[int],
) -> HttpResponse:
    """The step that asks: what the action will do and to how many findings, counted as the
    queue counts (up to COUNT_CAP, beyond it the exact number is what the action reports)."""
    findings = findings.order_by()
    matched = findings[: COUNT_CAP + 1].count()
    changing = findings
    if action in Verdict.values:
        held = Q(held_by__isnull=False, held_until__gt=timezone.now()) & ~Q(held_by=request.user)
        changing = findings.exclude(status=action).exclude(held)
    elif action == "assign":
        changing = (
            findings.exclude(assignee=assignee) if assignee else findings.exclude(assignee__isnull=True)
        )
    changes = changing[: COUNT_CAP + 1].count()
    filters = read_filters(QueryDict(query))
    context = {
        "project": project,
        "query": query,
        "action": action,
        "verb": ACTION_WORDS[action],
        "reason": reason,
        "assignee": request.POST.get("assignee", ""),
        "assignee_name": assignee.username if assignee else "nobody",
        "scope": "selected" if turn_ids else "all",
        "turn_ids": turn_ids,
        "matched": matched,
        "matched_label": count_label(matched),
        "changes": changes,
        "changes_label": count_label(changes),
        "over_cap": changes > COUNT_CAP,
        "filters": describe(filters),
        "undo_minutes": settings.RECEIPTS_BULK_UNDO_SECONDS // 60,
    }
    return render(request, "checks/bulk_confirm.html", context)


def describe(filters: FindingFilter) -> list[tuple[str, str]]:
    """The filters that narrow the queue, as (name, value) for a person to read."""
    return [(name, "yes" if name == "disputed" else value) for name, value in filters.params()]


# The bulk actions a reviewer may still undo, newest first, kept in their session: the queue
# shows them without reading the audit log, which undo_batch reads to do the undoing.
UNDO_KEY = "bulk_undo"


def _offer_undo(request: HttpRequest, project: Project, batch: str, said: str) -> None:
    now = timezone.now()
    until = now + timedelta(seconds=settings.RECEIPTS_BULK_UNDO_SECONDS)
    kept = [o for o in request.session.get(UNDO_KEY, []) if datetime.fromisoformat(o["until"]) > now]
    offer = {"project": project.slug, "batch": batch, "said": said, "until": until.isoformat()}
    request.session[UNDO_KEY] = [offer, *kept][:10]


def _undo_offers(request: HttpRequest, project: Project) -> list[dict[str, Any]]:
    now = timezone.now()
    offers = []
    for offer in request.session.get(UNDO_KEY, []):
        until = datetime.fromisoformat(offer["until"])
        if offer["project"] == project.slug and until > now:
            offers.append({**offer, "until": until})
    return offers


def _undo(request: HttpRequest, project: Project, query: str) -> HttpResponse:
    batch = request.POST.get("batch", "")
    try:
        result = review.undo_batch(
            project=project, batch=batch, actor=request.user, seconds=settings.RECEIPTS_BULK_UNDO_SECONDS
        )
    except review.NotAllowed as exc:
        return HttpResponse(str(exc), status=403, content_type="text/plain; charset=utf-8")
    except review.ReviewError as exc:
        _forget_offer(request, batch)
        return _back(request, project, query, str(exc))
    _forget_offer(request, batch)
    said = f"Undone: {_findings(result.restored)} back as they were."
    if result.refused:
        shown = result.refused[:5]
        more = len(result.refused) - len(shown)
        said += f" {len(result.refused):,} left as they are: " + " ".join(shown)
        said += f" (and {more:,} more)" if more else ""
        messages.warning(request, said)
    else:
        messages.success(request, said)
    return redirect(_queue_url(project, query))


def _forget_offer(request: HttpRequest, batch: str) -> None:
    request.session[UNDO_KEY] = [o for o in request.session.get(UNDO_KEY, []) if o["batch"] != batch]


def _member_user(project: Project, value: str, me: Any) -> Any:
    if value in ("", "none"):
        return None
    if value == "me":
        return me
    user = get_user_model().objects.filter(username=value, memberships__project=project).first()
    if user is None:
        raise review.ReviewError(f"{value!r} is not a member of this project.")
    return user


def _queue_url(project: Project, query: str) -> str:
    url = reverse("queue", args=[project.slug])
    return f"{url}?{query}" if query else url


def _back(request: HttpRequest, project: Project, query: str, message: str) -> HttpResponse:
    messages.error(request, message)
    return redirect(_queue_url(project, query))


@login_required
@require_POST
def save_view(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = project_for(request, slug)
    query = filter_query(read_filters(QueryDict(request.POST.get("query", ""))))
    try:
        review.save_view(project=project, user=request.user, name=request.POST.get("name", ""), query=query)
    except review.ReviewError as exc:
        return _back(request, project, query, str(exc))
    return redirect(_queue_url(project, query))


@login_required
@require_POST
def delete_view(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    view = get_object_or_404(SavedView.objects.filter(project=project, user_id=membership.user_id), pk=pk)
    review.delete_view(view=view, user=request.user)
    return redirect(_queue_url(project, ""))


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
