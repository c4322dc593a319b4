"""The append-only audit log: every action on a project, hash-chained per project, and one
chain for the site (sign-ins and sign-outs, accounts and projects changed in the admin).

Two things keep the chains honest against someone who can write the database:

- Each event's hash is an HMAC-SHA256 under the audit key, which is in the settings and never
  in the database (``keys()``), so a rewritten event cannot be given a hash that verifies.
  Events written before the chain was keyed keep their plain SHA-256 and verify by that rule;
  none may follow a keyed event.
- The chain's head (its newest event's id and hash) is also written to a file per chain under
  ``RECEIPTS_AUDIT_DIR`` once the event commits, so deleting the newest events shows: the
  database's last event must be the head the file names.
"""

from __future__ import annotations

import fcntl
import getpass
import hmac
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from .models import AuditEvent, ChainedEvent, ChainScheme, Project, SiteEvent

log = logging.getLogger(__name__)

GENESIS = "0" * 64
# The site chain's writers take this PostgreSQL advisory lock, as a project's take its row.
SITE_LOCK = 0x7263707473697465  # "rcptsite"
HEAD_MATCHES = "matches"
HEAD_NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class System:
    """An actor that is not a signed-in user, such as a management command."""

    username: str
    is_authenticated: bool = False


def login_name() -> str:
    """The system user this process runs as."""
    try:
        return getpass.getuser()
    except Exception:  # no login name and no passwd entry, as in some containers
        return "unknown"


def command_actor(command: str) -> System:
    """A management command as an actor: the command, and the system user who ran it."""
    return System(username=f"manage.py {command} ({login_name()})")


def keys() -> list[bytes]:
    """The audit key, then older ones that events written before a rotation verify with.

    RECEIPTS_AUDIT_KEY when it is set; otherwise a key derived from SECRET_KEY under a fixed
    label, so that it too is in no table (and not SECRET_KEY itself)."""
    if settings.RECEIPTS_AUDIT_KEY:
        return [k.encode() for k in [settings.RECEIPTS_AUDIT_KEY, *settings.RECEIPTS_AUDIT_KEY_FALLBACKS]]
    secrets = [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    return [salted_hmac("receipts.audit-chain", "v1", secret=s, algorithm="sha256").digest() for s in secrets]


def events_of(project: Project | None) -> QuerySet[Any]:
    """A project's chain, or the site's when project is None."""
    if project is None:
        return SiteEvent.objects.all()
    return AuditEvent.objects.filter(project=project)


def _lock_chain(project: Project | None) -> None:
    # Serializing the writers of a chain means two people acting at once cannot both extend
    # the same previous event and fork it. On SQLite every write transaction already holds
    # the database's one write lock (BEGIN IMMEDIATE, settings.py), so nothing more is taken.
    if project is not None:
        Project.objects.select_for_update().filter(pk=project.pk).first()
    elif connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SITE_LOCK])


@transaction.atomic
def record(
    *,
    project: Project | None,
    actor: Any,
    verb: str,
    target: Any,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> ChainedEvent:
    """Appends an event to the project's chain (the site's when project is None)."""
    _lock_chain(project)
    last = events_of(project).order_by("-id").values_list("hash", flat=True).first()
    fields: dict[str, Any] = {
        "actor_name": (getattr(actor, "username", "") or "")[:150],
        "verb": verb,
        "object_type": type(target).__name__.lower() if target is not None else "",
        "object_id": str(target.pk) if target is not None else "",
        "before": before,
        "after": after,
        "created_at": timezone.now(),
        "previous_hash": last or GENESIS,
        "scheme": ChainScheme.HMAC_SHA256,
    }
    event: ChainedEvent
    if project is None:
        event = SiteEvent(**fields)
    else:
        user = actor if getattr(actor, "is_authenticated", False) else None
        event = AuditEvent(project=project, actor=user, **fields)
    event.hash = event.compute_hash(keys()[0])
    event.save()
    # The head moves only once the event is committed (a rolled-back event never was), and a
    # file that cannot be written is logged, not raised: the action itself has happened.
    chain = project.pk if project is not None else None
    transaction.on_commit(partial(advance_head, chain, event.pk), robust=True)
    return event


# --- the head, outside the database -------------------------------------------------------


@dataclass(frozen=True)
class Head:
    event: int
    hash: str


class HeadUnreadable(ValueError):
    """The head file is there but does not hold a head."""


def head_path(project_id: int | None) -> Path:
    name = "site.json" if project_id is None else f"project-{project_id}.json"
    return Path(settings.RECEIPTS_AUDIT_DIR) / name


def read_head(project_id: int | None) -> Head | None:
    path = head_path(project_id)
    try:
        data = json.loads(path.read_text())
        return Head(event=int(data["event"]), hash=str(data["hash"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HeadUnreadable(f"{path}: {exc}") from exc


def _chain_by_id(project_id: int | None) -> QuerySet[Any]:
    if project_id is None:
        return SiteEvent.objects.all()
    return AuditEvent.objects.filter(project_id=project_id)


def advance_head(project_id: int | None, event_id: int) -> None:
    """Records the chain's newest committed event as its head, unless a later one already is.

    The lock file serializes the processes that write this chain's head; under it the head
    only moves forward, and only from a head that is still in the database: after the newest
    events were deleted, the file keeps naming the missing one, so the next event written
    does not cover the deletion up."""
    path = head_path(project_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            head = read_head(project_id)
        except HeadUnreadable:
            log.error("audit head not moved: %s cannot be read", path, exc_info=True)
            return
        if head is not None and head.event >= event_id:
            return  # a later event of the same commit (or another process) wrote it already
        chain = _chain_by_id(project_id)
        if head is not None and not chain.filter(pk=head.event, hash=head.hash).exists():
            log.error("audit head not moved: %s names event %s, which is gone or changed", path, head.event)
            return
        newest = chain.order_by("-id").values_list("id", "hash").first()
        if newest is None:
            return
        body = {
            "chain": "site" if project_id is None else f"project {project_id}",
            "event": newest[0],
            "hash": newest[1],
            "written_at": timezone.now().isoformat(),
        }
        _replace(path, json.dumps(body, indent=1) + "\n")


def _replace(path: Path, text: str) -> None:
    """Writes a file whole or not at all: a temporary file beside it, synced, then renamed."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


# --- verification -------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainReport:
    project: str
    events: int
    broken_at: int | None  # the first event that does not verify (or the missing head's id)
    reason: str = ""  # why the chain does not verify; empty when it does
    head: str = ""  # HEAD_MATCHES or HEAD_NOT_RECORDED when the chain verifies

    @property
    def ok(self) -> bool:
        return not self.reason


def verify(project: Project | None) -> ChainReport:
    """Walks a chain from its first event, then compares its last with the recorded head: any
    edit, insertion or deletion shows, the deletion of the newest events included."""
    name = project.name if project is not None else "site"
    chain = events_of(project)
    valid_keys = keys()
    previous, count, keyed = GENESIS, 0, False
    newest: tuple[int, str] | None = None
    for event in chain.order_by("id").iterator():
        count += 1
        if event.previous_hash != previous:
            return ChainReport(name, count, event.pk, "its link to the previous event is broken")
        if event.scheme == ChainScheme.SHA256:
            if keyed or project is None:
                # The site log was keyed from its first event; a project's chain is keyed
                # from the first event written after the upgrade, for good.
                return ChainReport(name, count, event.pk, "it is unkeyed where the chain is keyed")
            matches = hmac.compare_digest(event.compute_hash(), event.hash)
        elif event.scheme == ChainScheme.HMAC_SHA256:
            keyed = True
            matches = any(hmac.compare_digest(event.compute_hash(k), event.hash) for k in valid_keys)
        else:
            return ChainReport(name, count, event.pk, f"its hash scheme {event.scheme} is unknown")
        if not matches:
            return ChainReport(name, count, event.pk, "its content does not match its hash")
        previous, newest = event.hash, (event.pk, event.hash)
    return _against_head(project, name, count, newest)


def _against_head(
    project: Project | None, name: str, count: int, newest: tuple[int, str] | None
) -> ChainReport:
    project_id = project.pk if project is not None else None
    try:
        head = read_head(project_id)
    except HeadUnreadable as exc:
        return ChainReport(name, count, None, f"its recorded head cannot be read ({exc})")
    if head is None:
        # A fresh install, or a chain last written before heads were kept: nothing to compare.
        return ChainReport(name, count, None, head=HEAD_NOT_RECORDED)
    recorded = f"the head recorded outside the database is event {head.event}"
    if newest is None:
        return ChainReport(
            name, count, head.event, f"the newest events were deleted: the log is empty, {recorded}"
        )
    last_id, last_hash = newest
    if last_id < head.event:
        return ChainReport(
            name,
            count,
            head.event,
            f"the newest events were deleted: the log ends at event {last_id}, {recorded}",
        )
    if last_id == head.event:
        if hmac.compare_digest(last_hash, head.hash):
            return ChainReport(name, count, None, head=HEAD_MATCHES)
        return ChainReport(name, count, last_id, f"it is not the event recorded as the head: {recorded}")
    chain = events_of(project)
    if not chain.filter(pk=head.event, hash=head.hash).exists():
        return ChainReport(
            name, count, head.event, f"the chain was rewritten: {recorded}, which is gone or changed"
        )
    after = chain.filter(pk__gt=head.event).order_by("id")
    first = after.values_list("id", flat=True).first()
    return ChainReport(
        name,
        count,
        first,
        f"the log runs past its recorded head: {after.count()} event(s) after event {head.event} "
        "were written without moving the head (a process that could not write RECEIPTS_AUDIT_DIR, "
        "or one that does not share it)",
    )
