"""Finding or making a project by name."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.text import slugify

from . import audit
from .models import Project


@transaction.atomic
def get_or_create_project(name: str, *, actor: Any) -> tuple[Project, bool]:
    """The project of that name, made (and the making written to the site's audit chain, as
    the Django admin writes it) when there is none."""
    project = Project.objects.filter(name=name).first()
    if project:
        return project, False
    base = slugify(name) or "project"
    slug, n = base, 1
    while Project.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    project = Project.objects.create(name=name, slug=slug)
    # The site's chain: a project's own would keep it from ever being deleted (checks.admin).
    audit.record(
        project=None,
        actor=actor,
        verb="project.created",
        target=project,
        after={"name": project.name, "slug": project.slug},
    )
    return project, True
