"""`manage.py apikey create --project NAME`: a new API key, printed once as the last line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ...models import ApiKey
from ...projects import get_or_create_project


class Command(BaseCommand):
    help = "Manage a project's API keys."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Create a key (and the project, if it does not exist).")
        create.add_argument("--project", required=True, help="The project's name.")
        create.add_argument("--name", default="", help="A label for the key, such as the agent that uses it.")
        revoke = sub.add_parser("revoke", help="Revoke a key by its prefix.")
        revoke.add_argument("prefix")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "create":
            project, created = get_or_create_project(options["project"])
            if created:
                self.stderr.write(f"Created project {project.name!r}.")
            _, secret = ApiKey.issue(project=project, name=options["name"])
            self.stderr.write("Keep this key now: it is stored only as a hash and cannot be shown again.")
            self.stdout.write(secret)
        else:
            from django.utils import timezone

            count = ApiKey.objects.filter(
                prefix=options["prefix"][: ApiKey.PREFIX_LENGTH], revoked_at=None
            ).update(revoked_at=timezone.now())
            self.stdout.write(f"Revoked {count} key(s).")
