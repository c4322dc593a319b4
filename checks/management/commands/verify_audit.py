"""`manage.py verify_audit`: walks each project's audit chain, and the site's, and compares each
with its recorded head; exits 1 if any is broken. `manage.py audit verify` says more."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import audit
from ...models import Project


class Command(BaseCommand):
    help = "Verify the hash chain of the audit log of every project and the site (or one project)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", help="Only this project (its name).")

    def handle(self, *args: Any, **options: Any) -> None:
        chains: list[Project | None] = list(Project.objects.all())
        if options["project"]:
            chains = [p for p in chains if p is not None and p.name == options["project"]]
        else:
            chains.append(None)  # the site's chain
        broken = 0
        for project in chains:
            report = audit.verify(project)
            if report.ok:
                head = "" if report.head == audit.HEAD_MATCHES else " (head not recorded)"
                self.stdout.write(f"{report.project}: {report.events} events, chain intact{head}")
            else:
                broken += 1
                self.stdout.write(
                    f"{report.project}: chain broken at event {report.broken_at}: {report.reason}"
                )
        if broken:
            raise CommandError(f"{broken} chain(s) of the audit log are broken.")
