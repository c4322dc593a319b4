"""A project's members: admins add reviewers and viewers, change roles and remove people.

The last admin cannot be removed or demoted, and every change is audited."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from .. import administration
from ..models import Membership, Project, Role
from .access import project_for, require_admin


@login_required
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """Every member sees who is on the project; only admins change it (POST adds a member)."""
    project, membership = project_for(request, slug)
    status = 200
    if request.method == "POST":
        require_admin(membership, "add members")
        try:
            added = administration.add_member(
                project=project,
                actor=request.user,
                username=request.POST.get("username", ""),
                role=request.POST.get("role", Role.REVIEWER),
            )
        except administration.AdminError as exc:
            messages.error(request, str(exc))
            status = 400
        else:
            messages.success(request, f"{added.user.username} added as {added.get_role_display().lower()}.")
            return redirect(reverse("members", args=[project.slug]))
    people = Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    context = {"project": project, "membership": membership, "people": people, "roles": Role.choices}
    return render(request, "checks/members.html", context, status=status)


def _membership(request: HttpRequest, slug: str, pk: int) -> tuple[Project, Membership]:
    project, membership = project_for(request, slug)
    require_admin(membership, "change or remove members")
    return project, get_object_or_404(Membership.objects.filter(project=project), pk=pk)


@login_required
@require_POST
def change_role(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, target = _membership(request, slug, pk)
    try:
        administration.change_role(membership=target, actor=request.user, role=request.POST.get("role", ""))
    except administration.AdminError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{target.user.username} is now {request.POST.get('role')}.")
    return redirect(reverse("members", args=[slug]))


@login_required
@require_POST
def remove(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Removes a member once the admin has confirmed it on a page that says what it does."""
    project, target = _membership(request, slug, pk)
    name = target.user.username
    if request.POST.get("confirm") != "yes":
        open_assigned = target.user.assigned_findings.filter(project=project, status="open").count()
        context = {"project": project, "target": target, "open_assigned": open_assigned}
        return render(request, "checks/member_remove.html", context)
    try:
        administration.remove_member(membership=target, actor=request.user)
    except administration.AdminError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{name} removed from the project.")
    if target.user_id == request.user.pk and not Membership.objects.filter(pk=target.pk).exists():
        return redirect(reverse("home"))
    return redirect(reverse("members", args=[slug]))
