"""`manage.py load_demo`: the example conversations in a `demo` project, and who can review them.

`make run` runs it every time, so a second run changes nothing and writes nothing to the
audit log. What a run does change is audited as the Django admin or the members page would
audit it, by "manage.py load_demo" and the system user who ran it: the project made (site
chain), the account made (site chain), and the account made an admin of the project (the
project's chain), which it becomes only when it is not a member already: an existing
member keeps the role they have.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from ... import administration, audit, ingestion
from ...models import Membership, Role
from ...projects import get_or_create_project

DEMO_DIR = Path(settings.BASE_DIR) / "demo"


class Command(BaseCommand):
    help = "Load the demo conversations and create a demo reviewer (safe to run again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", default="demo")
        parser.add_argument("--username", default="reviewer")
        parser.add_argument("--password", default=os.environ.get("RECEIPTS_DEMO_PASSWORD", "receipts-demo"))

    def handle(self, *args: Any, **options: Any) -> None:
        actor = audit.command_actor("load_demo")
        project, _ = get_or_create_project(options["project"], actor=actor)
        counts: dict[str, int] = {}
        for path in sorted(DEMO_DIR.glob("*.json")):
            if path.name == "EXPECTED.json":
                continue
            body = path.read_text()
            result = ingestion.ingest_conversation(project=project, payload=json.loads(body), body=body)
            counts[result.status] = counts.get(result.status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        self.stdout.write(f"Demo conversations in project {project.name!r}: {summary}.")

        with transaction.atomic():
            user, created = _account(actor, options["username"].strip(), options["password"])
            if not Membership.objects.filter(project=project, user=user).exists():
                administration.add_member(
                    project=project, actor=actor, username=user.username, role=Role.ADMIN
                )
        password = options["password"] if created else "(unchanged since it was created)"
        self.stdout.write(f"Demo reviewer login: username {user.username!r}, password {password!r}")


def _account(actor: audit.System, username: str, password: str) -> tuple[Any, bool]:
    """The demo account, made with the password given (and audited) when there is none."""
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
        audit.record(
            project=None,
            actor=actor,
            verb="user.created",
            target=user,
            after={"username": user.username, "password": "(changed)"},
        )
    return user, created
