"""A project's API keys: made (and shown once), listed by prefix, revoked. Admins only."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from .. import audit
from ..models import ApiKey, Membership, Project, Role, Scope
from .access import project_for

EXPIRY_CHOICES = [("", "never"), ("30", "in 30 days"), ("90", "in 90 days"), ("365", "in a year")]


def _admin_project(request: HttpRequest, slug: str) -> tuple[Project, Membership]:
    project, membership = project_for(request, slug)
    if membership.role != Role.ADMIN:
        raise PermissionDenied("Only a project admin can manage its API keys.")
    return project, membership


@login_required
def keys(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = _admin_project(request, slug)
    context = {
        "project": project,
        "membership": membership,
        "keys": ApiKey.objects.filter(project=project).order_by("-created_at"),
        "scopes": Scope.choices,
        "expiry_choices": EXPIRY_CHOICES,
        "secret": None,
        "error": "",
    }
    status = 200
    if request.method == "POST":
        name = request.POST.get("name", "").strip()[:100]
        scopes = [s for s in request.POST.getlist("scopes") if s in Scope.values]
        days = request.POST.get("expires", "")
        if not scopes:
            context["error"], status = "scopes: choose at least one of ingest, read, check.", 400
        elif days and not days.isdigit():
            context["error"], status = "expires: choose one of the listed periods.", 400
        else:
            expires_at = timezone.now() + timedelta(days=int(days)) if days else None
            key, secret = ApiKey.issue(project=project, name=name, scopes=scopes, expires_at=expires_at)
            audit.record(
                project=project,
                actor=request.user,
                verb="apikey.created",
                target=key,
                after={"prefix": key.prefix, "name": name, "scopes": scopes},
            )
            # Shown on this one response only: the key is kept as a hash.
            context["secret"] = secret
    return render(request, "checks/keys.html", context, status=status)


@login_required
@require_POST
def revoke_key(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, _ = _admin_project(request, slug)
    key = get_object_or_404(ApiKey.objects.filter(project=project), pk=pk)
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit.record(
            project=project,
            actor=request.user,
            verb="apikey.revoked",
            target=key,
            before={"revoked_at": None},
            after={"revoked_at": key.revoked_at.isoformat()},
        )
    return redirect("keys", project.slug)
