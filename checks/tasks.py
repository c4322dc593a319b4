"""Every Celery task of the app, gathered for the worker (Celery's autodiscovery imports this).

Each task lives beside the workflow it runs; this module only names them in one place.
"""

from .checking import check_runs_task, sweep_pending_runs
from .raw_exports import store_raw_exports_task, sweep_raw_exports
from .reporting.daily import refresh_marked_days
from .reporting.jobs import run_export_task
from .webhooks import deliver_webhook_task

__all__ = [
    "check_runs_task",
    "deliver_webhook_task",
    "refresh_marked_days",
    "run_export_task",
    "store_raw_exports_task",
    "sweep_pending_runs",
    "sweep_raw_exports",
]
