"""The append-only audit log: every reviewer action, hash-chained per project."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from .models import AuditEvent, Project

GENESIS = "0" * 64


@transaction.atomic
def record(
    *,
    project: Project,
    actor: Any,
    verb: str,
    target: Any,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEvent:
    # Locking the project row serializes writers of its chain, so two reviewers acting at
    # once cannot both extend the same previous event and fork the chain.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    last = AuditEvent.objects.filter(project=project).order_by("-id").values_list("hash", flat=True).first()
    event = AuditEvent(
        project=project,
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        actor_name=getattr(actor, "username", "") or "",
        verb=verb,
        object_type=type(target).__name__.lower(),
        object_id=str(target.pk),
        before=before,
        after=after,
        created_at=timezone.now(),
        previous_hash=last or GENESIS,
    )
    event.hash = event.compute_hash()
    event.save()
    return event


@dataclass(frozen=True)
class ChainReport:
    project: str
    events: int
    broken_at: int | None  # id of the first event that does not verify
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify(project: Project) -> ChainReport:
    """Walks a project's chain from the first event; any edit, deletion or insertion shows."""
    previous = GENESIS
    count = 0
    for event in AuditEvent.objects.filter(project=project).order_by("id").iterator():
        count += 1
        if event.previous_hash != previous:
            return ChainReport(project.name, count, event.pk, "its link to the previous event is broken")
        if event.compute_hash() != event.hash:
            return ChainReport(project.name, count, event.pk, "its content does not match its hash")
        previous = event.hash
    return ChainReport(project.name, count, None)
