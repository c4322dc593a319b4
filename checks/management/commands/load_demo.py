"""`manage.py load_demo`: the example conversations in a `demo` project, and who can review them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from ... import ingestion
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
        project, _ = get_or_create_project(options["project"])
        counts: dict[str, int] = {}
        for path in sorted(DEMO_DIR.glob("*.json")):
            if path.name == "EXPECTED.json":
                continue
            body = path.read_text()
            result = ingestion.ingest_conversation(project=project, payload=json.loads(body), body=body)
            counts[result.status] = counts.get(result.status, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        self.stdout.write(f"Demo conversations in project {project.name!r}: {summary}.")

        User = get_user_model()
        user, created = User.objects.get_or_create(username=options["username"])
        if created:
            user.set_password(options["password"])
            user.save()
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ADMIN})
        password = options["password"] if created else "(unchanged since it was created)"
        self.stdout.write(f"Demo reviewer login: username {user.username!r}, password {password!r}")
