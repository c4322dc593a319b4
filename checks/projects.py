"""Finding or making a project by name."""

from __future__ import annotations

from django.utils.text import slugify

from .models import Project


def get_or_create_project(name: str) -> tuple[Project, bool]:
    project = Project.objects.filter(name=name).first()
    if project:
        return project, False
    base = slugify(name) or "project"
    slug, n = base, 1
    while Project.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return Project.objects.create(name=name, slug=slug), True
