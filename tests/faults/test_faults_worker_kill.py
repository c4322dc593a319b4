"""A worker killed with SIGKILL in the middle of a batch, again and again, loses no check and
repeats none.

Conversations go in through the bulk API in rounds; in each round the worker is killed
while it holds a claimed run (its transaction cut off, its message never acknowledged) and a
new one is started. Every third kill takes only the pool processes, so the worker's main
process sees them lost and rejects the message back to the queue. What the kills leave is
recovered by late acknowledgement (the unacknowledged message comes back after the
visibility timeout), by the sweeper (runs pending or claimed for too long are sent again) and
made harmless by the conditional claim and the findings' fingerprints.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from django.utils import timezone

from checks.models import CheckRun, RunStatus
from tests.faults.faultkit import (
    SWEEP_LINE,
    audit_conversations,
    broker_backlog,
    conversations,
    kill_in_turn,
    redeliver_unacked,
    unfinished_runs,
    wait_until,
)
from tests.faults.faultkit import (
    poll as _poll,
)

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SENT = 300
ROUNDS = 30  # 20 kills of the whole worker, 10 of its pool processes
CLAIM_SECONDS = 60  # for a restarted worker to start and claim a run
RECOVER_SECONDS = 180


def _claimed_since(since: Any) -> bool:
    return CheckRun.objects.filter(status=RunStatus.RUNNING, claimed_at__gte=since).exists()


def test_sigkilled_workers_lose_and_repeat_no_check(
    client: Any, api_key: str, cluster: Any, settings: Any, report_figures: Any
) -> None:
    settings.RECEIPTS_CHECK_BATCH = 50
    started = time.monotonic()
    rng = random.Random(9)
    payloads = conversations(SENT, "kill")
    external_ids = [p["external_id"] for p in payloads]
    per_round = -(-SENT // ROUNDS)
    headers = {"Authorization": f"Bearer {api_key}"}
    cluster.beat()

    worker = None
    whole_kills = pool_kills = mid_batch = 0
    for round_ in range(ROUNDS):
        if worker is None or not worker.alive():
            worker = cluster.worker()
        batch = payloads[round_ * per_round : (round_ + 1) * per_round]
        since = timezone.now()
        if batch:
            response = client.post(
                "/api/v1/conversations/bulk",
                data=json.dumps(batch),
                content_type="application/json",
                headers=headers,
            )
            assert response.status_code == 207, response.content
            assert response.json()["counts"] == {"created": len(batch)}, response.json()

        # Wait for the worker to hold a run it claimed in this round, then kill it there:
        # mid-batch, at a point that varies from the suite's work to the findings' commit.
        holding = _poll(lambda since=since: _claimed_since(since), CLAIM_SECONDS)
        time.sleep(rng.uniform(0, 0.03))
        if kill_in_turn(worker, round_):
            pool_kills += 1
        else:
            whole_kills += 1
        if holding and CheckRun.objects.exclude(status=RunStatus.DONE).exists():
            mid_batch += 1

    if worker is None or not worker.alive():
        worker = cluster.worker()
    wait_until(
        lambda: unfinished_runs(external_ids) == 0,
        timeout=RECOVER_SECONDS,
        what="every run to finish after the kills",
        logs=cluster,
    )
    # The killed workers' messages, never acknowledged, come back and find nothing to do.
    redelivered = redeliver_unacked()
    drained = _poll(lambda: broker_backlog() == {"queued": 0, "unacked": 0}, 60, every=0.25)
    time.sleep(1)
    cluster.stop_all()

    audit = audit_conversations(external_ids)
    swept = [int(n) for n in SWEEP_LINE.findall((cluster.logs / "workers.log").read_text(errors="replace"))]
    figures = {
        "sent": audit["sent"],
        "checked_once": audit["checked_once"],
        "lost": audit["lost"],
        "duplicated": audit["duplicated"],
        "duplicate_fingerprints": audit["duplicate_fingerprints"],
        "findings": audit["findings"],
        "worker_kills": whole_kills,
        "pool_kills": pool_kills,
        "mid_batch_kills": mid_batch,
        "workers_started": cluster.started,
        "runs_by_attempts": audit["attempts"],
        "runs_reenqueued_by_sweeper": sum(swept),
        "messages_redelivered": redelivered,
        "seconds": round(time.monotonic() - started, 1),
    }
    report_figures(figures)
    assert audit["problems"] == [], audit["problems"]
    assert audit["checked_once"] == SENT
    assert audit["lost"] == audit["duplicated"] == audit["duplicate_fingerprints"] == 0
    assert drained, f"the broker still holds {broker_backlog()}"
    assert whole_kills >= 20 and mid_batch >= 20, figures
