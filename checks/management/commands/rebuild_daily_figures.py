"""`manage.py rebuild_daily_figures`: counts the overview's figures of every day anew from the
findings, for every project (or those named). Run it after a restore or a bulk import that
went around the app; the app keeps the figures right as findings are written and decided."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...models import Project
from ...reporting import daily


class Command(BaseCommand):
    help = "Count the overview's figures per day anew from the findings (every project, or those named)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", action="append", default=[], help="A project's slug (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        projects = Project.objects.order_by("slug")
        if options["project"]:
            projects = projects.filter(slug__in=options["project"])
            missing = set(options["project"]) - set(projects.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"--project: no project with the slug {', '.join(sorted(missing))}.")
        for project in projects:
            started = time.perf_counter()
            days = daily.rebuild(project)
            self.stdout.write(f"{project.slug}: {days} days counted in {time.perf_counter() - started:.1f} s")
