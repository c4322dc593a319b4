"""`manage.py verify_audit`: walks each project's audit chain; exits 1 if any link is broken."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import audit
from ...models import Project


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log of every project (or one)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", help="Only this project (its name).")

    def handle(self, *args: Any, **options: Any) -> None:
        projects = Project.objects.all()
        if options["project"]:
            projects = projects.filter(name=options["project"])
        broken = 0
        for project in projects:
            report = audit.verify(project)
            if report.ok:
                self.stdout.write(f"{project.name}: {report.events} events, chain intact")
            else:
                broken += 1
                self.stdout.write(
                    f"{project.name}: chain broken at event {report.broken_at}: {report.reason}"
                )
        if broken:
            raise CommandError(f"{broken} project(s) have a broken audit chain.")
