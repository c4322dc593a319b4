"""Raw-first OTLP ingestion: an export is kept as received, answered, and stored behind.

An OpenTelemetry exporter waits for each answer with a timeout (10 s by default) and drops
spans, in silence, when its queue fills; so /v1/traces and /v1/logs do in the request only
what must answer at once (the key, the size, the framing and the limits:
``otel.screen_request``), keep the body here (``accept``) and answer. Workers then take the
waiting exports in batches (``store_batch``):

- each batch is taken under a lease (``take``): ``SELECT … FOR UPDATE SKIP LOCKED`` on
  PostgreSQL, so workers never take the same export; a conditional update on SQLite, whose
  writers take turns anyway;
- it is stored in one transaction: the conversations, the refusals and each export's new
  state (``stored``, or ``refused`` with the reason) commit together, and the export rows
  stay locked until then. A worker killed mid-batch commits nothing; its lease runs out
  (RECEIPTS_OTLP_LEASE_SECONDS) and the sweeper (``sweep``, on the beat schedule) sends the
  exports to be taken again. Storing them twice is impossible, not merely harmless;
- the checks of what it stored are sent once the batch commits, to run once each trace has
  settled (RECEIPTS_OTLP_SETTLE_SECONDS: ``checking.settle_runs``).

The backlog is bounded (``backlog_full``): past RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS waiting
exports or RECEIPTS_OTLP_BACKLOG_MAX_BYTES of them, the endpoints answer 503 with
Retry-After, which OTLP exporters retry. With Celery's eager mode (the tests, a one-process
setup) the export is stored in its own request, as the task would be run there anyway.
"""

from __future__ import annotations

import logging
import math
import uuid
from datetime import timedelta

from celery import current_app, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone

from . import checking, ingestion, otlp_storing
from .models import ApiKey, ExportSignal, ExportState, Project, RawExport

log = logging.getLogger(__name__)

# What a 503 asks the exporter to wait before it sends again, in seconds.
RETRY_AFTER_SECONDS = 5
# A batch started this many times and never finished (each worker taking it died: out of
# memory, say) is not tried again: its exports are refused, with that reason.
MAX_ATTEMPTS = 10
# At most this many batches are sent by one sweep; the next sweep sends more.
MAX_SWEPT_BATCHES = 100


def backlog_full(size: int) -> str | None:
    """Why an export of ``size`` bytes cannot wait now (the bound it would pass, named by its
    setting), or None. An empty backlog takes any export the size limits let through."""
    waiting = RawExport.objects.filter(state=ExportState.WAITING).aggregate(n=Count("pk"), size=Sum("size"))
    count, held = waiting["n"] or 0, waiting["size"] or 0
    if count >= settings.RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS:
        return (
            f"{count} exports are waiting to be stored, the most RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS "
            f"({settings.RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS}) allows; send it again after Retry-After"
        )
    if held and held + size > settings.RECEIPTS_OTLP_BACKLOG_MAX_BYTES:
        return (
            f"the exports waiting to be stored hold {held} bytes, and this one would take them past "
            f"RECEIPTS_OTLP_BACKLOG_MAX_BYTES ({settings.RECEIPTS_OTLP_BACKLOG_MAX_BYTES}); send it again "
            "after Retry-After"
        )
    return None


def accept(
    *,
    project: Project,
    api_key: ApiKey | None,
    signal: ExportSignal,
    body: bytes,
    content_type: str,
    content_encoding: str,
    records: int,
) -> RawExport:
    """Keeps an export that passed the request's checks, and sends it to be stored; returns
    it as it stands when answered (stored already in eager mode)."""
    export = RawExport.objects.create(
        project=project,
        api_key=api_key,
        signal=signal,
        body=body,
        content_type=content_type[:100],
        content_encoding=content_encoding[:20],
        size=len(body),
        records=records,
    )
    if current_app.conf.task_always_eager:
        store_batch(ids=[export.pk])
        export.refresh_from_db()
    else:
        transaction.on_commit(lambda: enqueue(1))
    return export


def enqueue(batches: int) -> None:
    """Sends ``batches`` store tasks to the workers; each takes whatever is waiting. A lost
    message costs nothing but time: the sweeper sends what waits too long."""
    for _ in range(batches):
        try:
            store_raw_exports_task.apply_async()
        except Exception:  # the broker may be down; the export waits for the sweeper
            log.exception("could not send a store task for the waiting OTLP exports")
            return


def take(*, limit: int, ids: list[int] | None = None) -> tuple[str, list[int]]:
    """Leases up to ``limit`` waiting exports (the oldest first; only those of ``ids`` when
    given) that no live lease holds, to this worker: the lease's token and their ids.

    An export taken before and never finished (its worker died) may be what killed it, so
    it is taken alone: an export that kills every worker holds up no other, and is refused
    after MAX_ATTEMPTS (``_store_one``) while the rest are stored."""
    now = timezone.now()
    token = uuid.uuid4().hex
    free = Q(state=ExportState.WAITING) & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))
    takeable = RawExport.objects.filter(free)
    if ids is not None:
        takeable = takeable.filter(pk__in=ids)
    with transaction.atomic():
        if connection.features.has_select_for_update_skip_locked:
            takeable = takeable.select_for_update(skip_locked=True)
        rows = list(takeable.order_by("created_at", "pk").values_list("pk", "attempts")[:limit])
        if rows and rows[0][1] > 0:
            chosen = [rows[0][0]]
        else:
            chosen = [pk for pk, attempts in rows if attempts == 0]
        # Conditional, for a database without row locks: one taken meanwhile is left alone.
        RawExport.objects.filter(free, pk__in=chosen).update(
            lease_until=now + timedelta(seconds=settings.RECEIPTS_OTLP_LEASE_SECONDS),
            lease_token=token,
            attempts=F("attempts") + 1,
        )
    leased = RawExport.objects.filter(pk__in=chosen, lease_token=token).order_by("created_at", "pk")
    taken = list(leased.values_list("pk", flat=True))
    return token, taken


class LeaseLost(Exception):
    """Another worker took an export of this batch: the batch is undone, theirs stands."""


def store_batch(*, limit: int | None = None, ids: list[int] | None = None) -> list[RawExport]:
    """Takes a batch of waiting exports and stores it in one transaction; the exports it
    finished. A batch the database gave up on (a deadlock, a lost connection) is released
    at once, to be taken again."""
    token, taken = take(limit=limit or settings.RECEIPTS_OTLP_STORE_BATCH, ids=ids)
    if not taken:
        return []
    try:
        return _store_taken(token, taken)
    except (OperationalError, InterfaceError):
        if ids is not None:
            raise  # stored in its own request: the request fails, the export waits for the sweeper
        log.warning("a batch of OTLP exports was given up; released to be taken again", exc_info=True)
        _release(token, taken)
        enqueue(1)
        return []


@transaction.atomic
def _store_taken(token: str, taken: list[int]) -> list[RawExport]:
    # Locked until the batch commits: on PostgreSQL a worker finding the lease run out
    # meanwhile skips these rather than store them beside this one.
    exports = list(
        RawExport.objects.select_for_update(of=("self",))
        .select_related("project", "api_key")
        .filter(pk__in=taken, lease_token=token, state=ExportState.WAITING)
        .order_by("created_at", "pk")
    )
    run_ids: list[int] = []
    for export in exports:
        outcome = _store_one(export)
        run_ids += outcome.run_ids
        _finish(export, token, outcome)
    if run_ids:
        ids = list(dict.fromkeys(run_ids))
        settle = settings.RECEIPTS_OTLP_SETTLE_SECONDS
        transaction.on_commit(lambda: checking.enqueue_runs(ids, countdown=settle))
    return exports


def _store_one(export: RawExport) -> otlp_storing.Outcome:
    """One export of the batch, on a savepoint of its own: a fault of its own (a reader's
    error, a value the database refuses) undoes only it, and it is kept as refused with the
    reason rather than tried again forever. The database failing is the batch's fault."""
    if export.attempts > MAX_ATTEMPTS:
        return otlp_storing.refuse(
            export,
            f"storing this export was started {export.attempts - 1} times and never finished (the "
            "worker stopped each time, out of memory perhaps); send less in one export",
        )
    try:
        with transaction.atomic():
            return otlp_storing.store(export)
    except (OperationalError, InterfaceError):
        raise
    except Exception as exc:  # a bug of a reader, or a value the database refuses: this export's
        log.exception("OTLP export %s could not be stored", export.pk)
        return otlp_storing.refuse(export, f"the export could not be stored: {type(exc).__name__}: {exc}")


def _finish(export: RawExport, token: str, outcome: otlp_storing.Outcome) -> None:
    """Marks the export with what became of it, if this batch still holds its lease."""
    reason = ingestion.UNSTORABLE_TEXT.sub("\ufffd", outcome.reason)
    finished = RawExport.objects.filter(pk=export.pk, lease_token=token, state=ExportState.WAITING).update(
        state=outcome.state,
        rejected=outcome.rejected,
        reason=reason,
        counts=outcome.counts,
        finished_at=timezone.now(),
        lease_until=None,
    )
    if not finished:
        raise LeaseLost(f"export {export.pk} was taken by another worker")
    export.state, export.rejected, export.reason, export.counts = (
        outcome.state,
        outcome.rejected,
        reason,
        outcome.counts,
    )


def _release(token: str, taken: list[int]) -> None:
    """Gives a batch back at once, its attempt not counted: the database gave up on it, no
    worker died of it, so its exports are taken again together."""
    RawExport.objects.filter(pk__in=taken, lease_token=token, state=ExportState.WAITING).update(
        lease_until=None, lease_token="", attempts=F("attempts") - 1
    )


def sweep() -> int:
    """Sends store tasks for the exports left waiting: leased by a worker whose lease ran out
    (killed mid-batch), or never taken for a lease's time (their message lost); how many."""
    now = timezone.now()
    lost = now - timedelta(seconds=settings.RECEIPTS_OTLP_LEASE_SECONDS)
    left = (
        RawExport.objects.filter(state=ExportState.WAITING)
        .filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True, created_at__lt=lost))
        .count()
    )
    enqueue(min(math.ceil(left / max(1, settings.RECEIPTS_OTLP_STORE_BATCH)), MAX_SWEPT_BATCHES))
    return left


def waiting(projects: QuerySet[Project]) -> int:
    """How many exports of these projects (a queryset of them) wait to be stored."""
    return RawExport.objects.filter(project__in=projects, state=ExportState.WAITING).count()


# --- the Celery tasks that run these ------------------------------------------------------


@shared_task(name="checks.tasks.store_raw_exports")
def store_raw_exports_task() -> int:
    """Stores one batch of waiting OTLP exports; returns how many it finished."""
    return len(store_batch())


@shared_task(name="checks.tasks.sweep_raw_exports")
def sweep_raw_exports() -> int:
    """Sends the exports a killed worker or a lost message left waiting to be stored again."""
    return sweep()
