"""`manage.py audit verify`: walks each project's audit chain, and the site's, from its first
event and, where one does not verify, names it (id, time, actor, action, object) and exits 1.
Then it compares the chain's last event with the head recorded outside the database: a
missing head (the newest events deleted) or one the log runs past fails too; no head file at
all (a fresh install, or no event since heads were kept) is said, and does not fail.

`manage.py audit show --project SLUG [--object TYPE:ID]` prints events, oldest first."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ... import audit
from ...models import Project


class Command(BaseCommand):
    help = "Verify (or show) the hash-chained audit log."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        verify = actions.add_parser(
            "verify", help="Check every link of the chain; name the first broken one."
        )
        verify.add_argument("--project", help="Only this project (its slug or name).")
        show = actions.add_parser("show", help="Print the events of a project, oldest first.")
        show.add_argument("--project", required=True, help="The project's slug or name, or site.")
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
        chains: list[Project | None] = list(self._projects(which))
        if not which:
            chains.append(None)  # the site's chain
        for project in chains:
            label = project.slug if project is not None else "site"
            report = audit.verify(project)
            if report.ok:
                self.stdout.write(
                    f"{label}: {report.events} events, chain intact{self._head(project, report)}"
                )
                continue
            broken += 1
            self.stdout.write(f"{label}: chain broken{self._where(project, report)}: {report.reason}")
        if broken:
            raise CommandError(f"{broken} chain(s) of the audit log are broken.")

    def _where(self, project: Project | None, report: audit.ChainReport) -> str:
        """The event a chain breaks at, described; or only its id when it is gone."""
        if report.broken_at is None:
            return ""
        event = audit.events_of(project).filter(pk=report.broken_at).first()
        if event is None:
            return f" at event {report.broken_at}"
        return (
            f" at event {event.pk} ({event.created_at.isoformat()} {event.actor_name or '-'} "
            f"{event.verb} {event.object_type}:{event.object_id})"
        )

    def _head(self, project: Project | None, report: audit.ChainReport) -> str:
        path = audit.head_path(project.pk if project is not None else None)
        if report.head == audit.HEAD_MATCHES:
            return f", head matches {path}"
        return (
            f"; HEAD NOT RECORDED: there is no {path}, so the deletion of the newest events "
            "would not show (the next event written records it)"
        )

    def show(self, which: str, about: str | None) -> None:
        project: Project | None = None
        if which != "site":
            [project] = list(self._projects(which))[:1]
        events = audit.events_of(project).order_by("id")
        if about:
            kind, _, pk = about.partition(":")
            events = events.filter(object_type=kind, object_id=pk)
        for e in events:
            self.stdout.write(
                f"{e.pk}\t{e.created_at.isoformat()}\t{e.actor_name or '-'}\t{e.verb}\t"
                f"{e.object_type}:{e.object_id}\t{e.before}\t{e.after}"
            )
