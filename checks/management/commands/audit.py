"""`manage.py audit verify`: walks each project's audit chain from its first event and, where
one does not verify, names it (id, time, actor, action, object) and exits 1.

`manage.py audit show --project SLUG [--object TYPE:ID]` prints events, oldest first."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import audit
from ...models import AuditEvent, Project


class Command(BaseCommand):
    help = "Verify (or show) the hash-chained audit log."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        verify = actions.add_parser(
            "verify", help="Check every link of the chain; name the first broken one."
        )
        verify.add_argument("--project", help="Only this project (its slug or name).")
        show = actions.add_parser("show", help="Print the events of a project, oldest first.")
        show.add_argument("--project", required=True, help="The project's slug or name.")
        show.add_argument("--object", help="Only events about TYPE:ID, such as finding:12.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "verify":
            self.verify(options.get("project"))
        else:
            self.show(options["project"], options.get("object"))

    def _projects(self, which: str | None) -> Any:
        projects = Project.objects.order_by("id")
        if which:
            projects = projects.filter(slug=which) | projects.filter(name=which)
            if not projects.exists():
                raise CommandError(f"No project has the slug or name {which!r}.")
        return projects

    def verify(self, which: str | None) -> None:
        broken = 0
        for project in self._projects(which):
            report = audit.verify(project)
            if report.ok:
                self.stdout.write(f"{project.slug}: {report.events} events, chain intact")
                continue
            broken += 1
            assert report.broken_at is not None  # a chain that is not intact says where it breaks
            event = AuditEvent.objects.get(pk=report.broken_at)
            self.stdout.write(
                f"{project.slug}: chain broken at event {event.pk} "
                f"({event.created_at.isoformat()} {event.actor_name or '-'} {event.verb} "
                f"{event.object_type}:{event.object_id}): {report.reason}"
            )
        if broken:
            raise CommandError(f"{broken} project(s) have a broken audit chain.")

    def show(self, which: str, about: str | None) -> None:
        [project] = list(self._projects(which))[:1] or [None]
        events = AuditEvent.objects.filter(project=project).order_by("id")
        if about:
            kind, _, pk = about.partition(":")
            events = events.filter(object_type=kind, object_id=pk)
        for e in events:
            self.stdout.write(
                f"{e.pk}\t{e.created_at.isoformat()}\t{e.actor_name or '-'}\t{e.verb}\t"
                f"{e.object_type}:{e.object_id}\t{e.before}\t{e.after}"
            )
