"""An object's history read from the audit log, and the project's agreement page: Cohen's
kappa between reviewers and the precision reviewers measured for each checker and code."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from .. import administration, audit, blind_review, review
from ..filters import is_row_id
from ..models import ApiKey, AuditEvent, Comment, Correction, Finding, Membership, Project, SavedView
from .access import project_for, require_admin

KINDS = {"finding", "correction", "comment", "membership", "project", "savedview", "apikey", "invitation"}


@login_required
def history(request: HttpRequest, slug: str, kind: str, object_id: str) -> HttpResponse:
    """Every audited change of one object, oldest first; a finding's history includes its
    corrections and comments."""
    project, membership = project_for(request, slug)
    if kind not in KINDS:
        raise Http404("No such kind of object.")
    where = Q(object_type=kind, object_id=object_id)
    finding = None
    if kind == "finding":
        finding = Finding.objects.filter(project=project, pk=object_id if is_row_id(object_id) else 0).first()
        if finding is not None:
            corrections = Correction.objects.filter(finding=finding).values_list("pk", flat=True)
            comments = Comment.objects.filter(finding=finding).values_list("pk", flat=True)
            where |= Q(object_type="correction", object_id__in=[str(pk) for pk in corrections])
            where |= Q(object_type="comment", object_id__in=[str(pk) for pk in comments])
    logged = AuditEvent.objects.filter(project=project).filter(where)
    # What blind double review hides on the turn page stays hidden here; a correction is
    # hidden as its finding's decisions are.
    owner = _finding_of_correction(project, object_id) if kind == "correction" else finding
    if owner is not None:
        findings = Finding.objects.filter(pk=owner.pk).prefetch_related("decisions", "corrections")
        logged = logged.exclude(blind_review.hidden_events(project, findings, request.user))
    events = list(logged.order_by("id").select_related("actor"))
    if not events and finding is None and not _exists(project, kind, object_id):
        raise Http404("Nothing in the audit log for this object.")
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "kind": kind,
        "object_id": object_id,
        "finding": finding,
        "events": events,
        "chain": audit.verify(project),
    }
    return render(request, "checks/history.html", context)


# The objects whose page is not a 404 while the log holds nothing of them: a project's first
# admin, for one, was made with the project (by `manage.py apikey create` or the admin site),
# before the project's log had anything to record. A correction is not among them: that one
# exists says someone confirmed, which blind double review may still hide.
OBJECTS: dict[str, Any] = {
    "membership": Membership,
    "comment": Comment,
    "apikey": ApiKey,
    "savedview": SavedView,
}


def _exists(project: Project, kind: str, object_id: str) -> bool:
    """Whether the object is the project's own, though nothing of it is logged yet."""
    if not is_row_id(object_id):
        return False
    if kind == "project":
        return int(object_id) == project.pk
    model = OBJECTS.get(kind)
    return model is not None and model.objects.filter(project=project, pk=int(object_id)).exists()


def _finding_of_correction(project: Any, object_id: str) -> Finding | None:
    correction = Correction.objects.filter(
        finding__project=project, pk=object_id if is_row_id(object_id) else 0
    ).first()
    return correction.finding if correction else None


@login_required
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    context = {
        "project": project,
        "membership": membership,
        "agreement": review.agreement(project),
        "by_checker": review.precision(project, by="checker"),
        "by_code": review.precision(project, by="code"),
        "disagreements": review.disagreements(project) if membership.can_review else [],
    }
    return render(request, "checks/agreement.html", context)


@login_required
@require_POST
def double_review(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, "turn double review on or off")
    administration.set_double_review(
        project=project, actor=request.user, enabled=request.POST.get("enabled") == "on"
    )
    return redirect(reverse("agreement", args=[project.slug]))
