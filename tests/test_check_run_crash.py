"""A worker that dies after a run's findings are written, before what follows them (the judge's
run, or the judge's token count and mirrored contradictions), leaves nothing half-done: the
run's outcome and what follows it commit together, so the run stays claimed and the sweeper
sends it again once its claim is stale."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from checks import checking, ingestion
from checks.models import CheckRun, Finding, RunKind, RunStatus
from tests.suite.test_judge import JudgeServer
from tests.test_judge_runs import _use_judge, status_conversation

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """Stands for the worker dying: nothing after it in the process runs."""


def test_a_worker_dying_before_the_judge_run_is_made_leaves_the_run_to_the_sweeper(
    project: Any,
    judge_server: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _use_judge(project, judge_server)
    payload = status_conversation("crash", "Billing is healthy and running normally.")
    result = ingestion.ingest_conversation(
        project=project, payload=payload, body=json.dumps(payload), enqueue=False
    )
    run = result.run

    real_create = CheckRun.objects.create

    def dies(**kwargs: Any) -> CheckRun:
        if kwargs.get("kind") == RunKind.JUDGE:
            raise Killed
        return real_create(**kwargs)

    monkeypatch.setattr(CheckRun.objects, "create", dies)
    with pytest.raises(Killed):
        checking.check_runs(run_ids=[run.pk])
    monkeypatch.undo()

    # Not done without its judge run: still claimed, its findings not written.
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.RUNNING, 1)
    assert not Finding.objects.filter(conversation=result.conversation).exists()
    assert not CheckRun.objects.filter(kind=RunKind.JUDGE).exists()

    # Once the claim is stale the sweeper sends it again, and this time it all happens.
    stale = timezone.now() - timedelta(seconds=settings.RECEIPTS_RUN_STALE_SECONDS + 1)
    CheckRun.objects.filter(pk=run.pk).update(claimed_at=stale)
    assert checking.stale_runs(RunKind.CHECKS) == [run.pk]
    with django_capture_on_commit_callbacks(execute=True):
        checking.check_runs(run_ids=[run.pk])
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.DONE, 2)
    judged = CheckRun.objects.get(kind=RunKind.JUDGE)
    assert judged.status == RunStatus.DONE
    assert Finding.objects.filter(conversation=result.conversation, code="not_entailed").count() == 1
