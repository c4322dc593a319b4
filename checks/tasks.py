"""Thin Celery tasks: they take ids and call a service.

Tasks are acknowledged late and rejected back to the queue if the worker dies (settings), and
the services they call are idempotent, so a redelivered message repeats no work it finished.
"""

from celery import shared_task

from . import services


@shared_task(name="checks.tasks.check_runs")
def check_runs(run_ids: list[int]) -> int:
    """Checks a batch of conversations; returns how many runs this worker finished."""
    return len(services.check_runs(run_ids=run_ids))


@shared_task(name="checks.tasks.sweep_pending_runs")
def sweep_pending_runs() -> int:
    """Re-enqueues runs whose message was lost (a broker restart, a crash before enqueue)."""
    run_ids = services.stale_runs()
    services.enqueue_runs(run_ids)
    return len(run_ids)
