"""Every queue a task goes to has a worker, and slow background work has queues of its own.

A webhook backlog or a large export on the checks' queue would hold up every check behind
it; so deliveries and export jobs are routed apart, and both ways of running Receipts (the
Procfile in production, `make run` on the embedded default) start a worker for each queue.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from django.conf import settings

from checks import checking, tasks
from grounding_site.celery import app

ROOT = Path(settings.BASE_DIR)


def queue_of(task_name: str) -> str:
    route = app.amqp.router.route({}, task_name)
    return route["queue"].name


def routed_queues() -> set[str]:
    every = {queue_of(getattr(tasks, name).name) for name in tasks.__all__}
    return every | {checking.JUDGE_QUEUE}  # the judge's runs name their queue when enqueued


def consumed(command_lines: str) -> set[str]:
    """The queues the celery workers of some command lines take from."""
    return {
        queue
        for match in re.finditer(r"celery -A \S+ worker\b[^&\n]*?--queues (\S+)", command_lines)
        for queue in match.group(1).split(",")
    }


def test_deliveries_and_exports_have_queues_of_their_own() -> None:
    assert queue_of("checks.tasks.deliver_webhook") == "webhooks"
    assert queue_of("checks.tasks.run_export") == "exports"
    assert queue_of("checks.tasks.check_runs") == "celery"


def test_the_procfile_starts_a_worker_for_every_queue() -> None:
    procfile = (ROOT / "Procfile").read_text()
    assert routed_queues() <= consumed(procfile)
    # and none of them shares a worker with the checks
    for line in procfile.splitlines():
        queues = consumed(line)
        assert not ("celery" in queues and queues & {"webhooks", "exports"}), line


def test_make_run_starts_a_worker_for_every_queue_and_listens_on_this_machine() -> None:
    dry = subprocess.run(
        ["make", "--dry-run", "--always-make", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.replace("\\\n", " ")
    assert routed_queues() <= consumed(dry)
    assert "runserver --noreload 127.0.0.1:" in dry
