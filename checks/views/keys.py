"""A project's API keys: made (and shown once), listed by prefix, revoked. Admins only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import administration
from ..models import ApiKey, Scope
from .access import project_for, require_admin

EXPIRY_CHOICES = [("", "never"), ("30", "in 30 days"), ("90", "in 90 days"), ("365", "in a year")]


@login_required
def keys(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, "manage its API keys")
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
        try:
            _, secret = administration.create_api_key(
                project=project,
                actor=request.user,
                name=request.POST.get("name", ""),
                scopes=request.POST.getlist("scopes"),
                expires_in_days=request.POST.get("expires", ""),
            )
        except administration.AdminError as exc:
            context["error"], status = str(exc), 400
        else:
            # Shown on this one response only: the key is kept as a hash.
            context["secret"] = secret
    return render(request, "checks/keys.html", context, status=status)


@login_required
@require_POST
def revoke_key(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, "manage its API keys")
    key = get_object_or_404(ApiKey.objects.filter(project=project), pk=pk)
    administration.revoke_api_key(key=key, actor=request.user)
    return redirect("keys", project.slug)
