"""Who may see and change what. Outsiders get 404 (a project's existence is not revealed),
members who may only read get 403 when they try to change something."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from ..models import Membership, Project, Role


def project_for(request: HttpRequest, slug: str) -> tuple[Project, Membership]:
    """The project and the user's membership in it; 404 for anyone outside it."""
    if not request.user.is_authenticated:
        raise Http404("No such project.")
    membership = (
        Membership.objects.select_related("project").filter(user=request.user, project__slug=slug).first()
    )
    if membership is None:
        raise Http404("No such project.")
    return membership.project, membership


def require_reviewer(membership: Membership) -> None:
    if not membership.can_review:
        raise PermissionDenied(
            "Viewers can read findings but not decide them; ask a project admin for the reviewer role."
        )


def require_admin(membership: Membership, what: str = "change this") -> None:
    """403 unless the member is an admin of the project; ``what`` completes the sentence
    "Only a project admin can …" that the refusal says."""
    if membership.role != Role.ADMIN:
        raise PermissionDenied(f"Only a project admin can {what}.")
