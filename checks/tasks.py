"""Thin Celery tasks: they take ids and call a service.

Tasks are acknowledged late and rejected back to the queue if the worker dies (settings), and
the services they call are idempotent, so a redelivered message repeats no work it finished.
"""

from celery import shared_task

from . import services
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
