"""Thin Celery tasks: they take ids and call a service.

Tasks are acknowledged late and rejected back to the queue if the worker dies (settings), and
the services they call are idempotent, so a redelivered message repeats no work it finished.
"""

from typing import Any

from celery import shared_task

from . import services, webhooks
from .models import RunKind


@shared_task(name="checks.tasks.check_runs")
def check_runs(run_ids: list[int]) -> int:
    """Checks a batch of conversations; returns how many runs this worker finished."""
    return len(services.check_runs(run_ids=run_ids))


@shared_task(name="checks.tasks.sweep_pending_runs")
def sweep_pending_runs() -> int:
    """Re-enqueues runs whose message was lost (a broker restart, a crash before enqueue)."""
    checks = services.stale_runs(RunKind.CHECKS)
    services.enqueue_runs(checks)
    judged = services.stale_runs(RunKind.JUDGE)
    services.enqueue_runs(judged, queue=services.JUDGE_QUEUE)
    return len(checks) + len(judged)


@shared_task(name="checks.tasks.run_export")
def run_export(job_id: int) -> str:
    """Writes a large export (or a report) to a file under var/exports; returns its status."""
    from . import exports

    job = exports.run_job(job_id)
    return job.status if job else "skipped"


@shared_task(name="checks.tasks.deliver_webhook", bind=True, max_retries=webhooks.MAX_ATTEMPTS - 1)
def deliver_webhook(self: Any, delivery_id: int) -> bool:
    """One attempt at a webhook delivery; a failure is tried again later, with backoff."""
    delivery = webhooks.attempt(delivery_id)
    if webhooks.should_retry(delivery):
        raise self.retry(countdown=webhooks.backoff(delivery.attempts))
    return delivery is not None and delivery.delivered_at is not None
