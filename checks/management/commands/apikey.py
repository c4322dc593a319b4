"""`manage.py apikey create --project NAME`: a new API key, printed once as the last line.

Creating and revoking keys here goes through the same workflows as the project's keys page,
so each is in the project's audit log, by "manage.py apikey" and the system user who ran it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from ... import administration, audit
from ...models import ApiKey, Scope
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
        actor = audit.command_actor("apikey")
        if options["action"] == "create":
            with transaction.atomic():
                project, created = get_or_create_project(options["project"], actor=actor)
                _, secret = administration.create_api_key(
                    project=project, actor=actor, name=options["name"], scopes=list(Scope.values)
                )
            if created:
                self.stderr.write(f"Created project {project.name!r}.")
            self.stderr.write("Keep this key now: it is stored only as a hash and cannot be shown again.")
            self.stdout.write(secret)
        else:
            keys = ApiKey.objects.filter(prefix=options["prefix"][: ApiKey.PREFIX_LENGTH], revoked_at=None)
            count = 0
            for key in keys.select_related("project"):
                administration.revoke_api_key(key=key, actor=actor)
                count += 1
            self.stdout.write(f"Revoked {count} key(s).")
