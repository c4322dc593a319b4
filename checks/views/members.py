"""A project's members: admins add reviewers and viewers, change roles and remove people,
and invite someone with no account by a link that works once.

The last admin cannot be removed or demoted, and every change is audited."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from .. import administration
from ..models import Invitation, Membership, Project, Role
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
    context = {
        "project": project,
        "membership": membership,
        "people": people,
        "roles": Role.choices,
        "invitations": [
            i for i in Invitation.objects.filter(project=project).order_by("-created_at") if i.usable
        ]
        if membership.role == Role.ADMIN
        else [],
    }
    return render(request, "checks/members.html", context, status=status)


@login_required
@require_POST
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    """An invitation link for someone with no account, shown to the admin once."""
    project, membership = project_for(request, slug)
    require_admin(membership, "invite people")
    try:
        invitation, token = administration.invite(
            project=project,
            actor=request.user,
            role=request.POST.get("role", Role.REVIEWER),
            note=request.POST.get("note", ""),
        )
    except administration.AdminError as exc:
        messages.error(request, str(exc))
        return redirect(reverse("members", args=[slug]))
    link = request.build_absolute_uri(reverse("invitation", args=[token]))
    context = {"project": project, "invitation": invitation, "link": link}
    return render(request, "checks/invitation_made.html", context)


@login_required
@require_POST
def revoke_invitation(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, "revoke invitations")
    invitation = get_object_or_404(Invitation.objects.filter(project=project), pk=pk)
    administration.revoke_invitation(invitation=invitation, actor=request.user)
    messages.success(request, "The invitation is revoked: its link no longer works.")
    return redirect(reverse("members", args=[slug]))


@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Where an invitation link leads: a signed-in person joins; anyone else makes an account
    (a name and a password) and joins with it. A used, revoked or run-out link is a 410."""
    found = administration.invitation_for(token)
    if found is None:
        return render(request, "checks/invitation.html", {"gone": True}, status=410)
    errors: list[str] = []
    if request.method == "POST":
        try:
            with transaction.atomic():
                user = request.user if request.user.is_authenticated else _new_account(request)
                administration.accept_invitation(invitation=found, user=user)
        except (administration.AdminError, ValidationError) as exc:
            errors = list(getattr(exc, "messages", [str(exc)]))
        else:
            if not request.user.is_authenticated:
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome to {found.project.name}.")
            return redirect(reverse("queue", args=[found.project.slug]))
    context = {"invitation": found, "errors": errors, "username": request.POST.get("username", "")}
    return render(request, "checks/invitation.html", context, status=400 if errors else 200)


def _new_account(request: HttpRequest) -> Any:
    """The account an invited person makes: a free name and a password the validators take."""
    username = request.POST.get("username", "").strip()
    password = request.POST.get("password", "")
    users = get_user_model()
    if not username or len(username) > 150:
        raise administration.AdminError("Choose a name of 1 to 150 characters.")
    if users.objects.filter(username=username).exists():
        raise administration.AdminError(f"The name {username!r} is taken; choose another.")
    candidate = users(username=username)
    validate_password(password, candidate)
    return users.objects.create_user(username=username, password=password)


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
