"""Redis restarted while runs wait in its queue and others are in a worker's hands: nothing is
lost and nothing checked twice.

The private Redis keeps nothing on disk, so each restart drops every queued message and every
unacknowledged one. The runs stay in PostgreSQL, pending or claimed: the sweeper sends them
again once they are stale, the workers and the scheduler reconnect on their own, and the
conditional claim keeps a run that a worker was finishing from being checked again.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import pytest

from checks.models import CheckRun, RunStatus
from tests.faults import private_services
from tests.faults.faultkit import (
    SWEEP_LINE,
    audit_conversations,
    broker_backlog,
    conversations,
    redeliver_unacked,
    unfinished_runs,
    wait_until,
)
from tests.faults.faultkit import (
    poll as _poll,
)

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SENT = 300
CHUNK = 30  # conversations per bulk request
BATCH = 5  # run ids per task message, so a chunk is several messages
RESTART_AFTER_CHUNKS = {4, 7, 10}  # a restart once these many chunks were sent
RECOVER_SECONDS = 180


def _queued_and_in_flight() -> tuple[int, int] | None:
    """(messages queued, runs claimed) when both are there, else None."""
    in_flight = CheckRun.objects.filter(status=RunStatus.RUNNING).count()
    if not in_flight:
        return None
    queued = broker_backlog()["queued"]
    return (queued, in_flight) if queued else None


def test_redis_restarts_lose_and_repeat_no_check(
    client: Any, api_key: str, cluster: Any, settings: Any, report_figures: Any
) -> None:
    settings.RECEIPTS_CHECK_BATCH = BATCH
    started = time.monotonic()
    payloads = conversations(SENT, "redis")
    external_ids = [p["external_id"] for p in payloads]
    headers = {"Authorization": f"Bearer {api_key}"}

    def send(chunk: list[dict[str, Any]]) -> None:
        response = client.post(
            "/api/v1/conversations/bulk",
            data=json.dumps(chunk),
            content_type="application/json",
            headers=headers,
        )
        assert response.status_code == 207, response.content
        assert response.json()["counts"] == {"created": len(chunk)}, response.json()

    cluster.beat()
    chunks = [payloads[i : i + CHUNK] for i in range(0, SENT, CHUNK)]
    # A backlog first, so that the first restart finds messages queued.
    for chunk in chunks[:3]:
        send(chunk)
    workers = [cluster.worker(), cluster.worker()]
    restarts: list[dict[str, Any]] = []
    for sent_chunks, chunk in enumerate(chunks[3:], start=4):
        send(chunk)
        if sent_chunks not in RESTART_AFTER_CHUNKS:
            continue
        seen = _poll(_queued_and_in_flight, 60)
        assert seen, "no moment with messages queued and a run in flight"
        # SIGTERM (a restart) and SIGKILL (a crash) alike drop everything: nothing is saved.
        sig = signal.SIGKILL if len(restarts) % 2 else signal.SIGTERM
        private_services.stop_redis(sig=sig)
        down = time.monotonic()
        time.sleep(1)
        private_services.start_redis()
        restarts.append(
            {
                "queued": seen[0],
                "in_flight": seen[1],
                "signal": sig.name,
                "down_s": round(time.monotonic() - down, 1),
            }
        )

    wait_until(
        lambda: unfinished_runs(external_ids) == 0 and CheckRun.objects.count() >= SENT,
        timeout=RECOVER_SECONDS,
        what="every run to finish after the Redis restarts",
        logs=cluster,
    )
    redelivered = redeliver_unacked()
    drained = _poll(lambda: broker_backlog() == {"queued": 0, "unacked": 0}, 60, every=0.25)
    alive = all(worker.alive() for worker in workers)
    time.sleep(1)
    cluster.stop_all()

    audit = audit_conversations(external_ids)
    log = (cluster.logs / "workers.log").read_text(errors="replace")
    figures = {
        "sent": audit["sent"],
        "checked_once": audit["checked_once"],
        "lost": audit["lost"],
        "duplicated": audit["duplicated"],
        "duplicate_fingerprints": audit["duplicate_fingerprints"],
        "findings": audit["findings"],
        "redis_restarts": len(restarts),
        "queued_messages_dropped": sum(r["queued"] for r in restarts),
        "runs_in_flight_at_restart": sum(r["in_flight"] for r in restarts),
        "restarts": restarts,
        "runs_by_attempts": audit["attempts"],
        "runs_reenqueued_by_sweeper": sum(int(n) for n in SWEEP_LINE.findall(log)),
        "messages_redelivered": redelivered,
        "seconds": round(time.monotonic() - started, 1),
    }
    report_figures(figures)
    assert audit["problems"] == [], audit["problems"]
    assert audit["checked_once"] == SENT
    assert audit["lost"] == audit["duplicated"] == audit["duplicate_fingerprints"] == 0
    assert len(restarts) == len(RESTART_AFTER_CHUNKS)
    assert alive, "a worker died with the broker instead of reconnecting"
    assert drained, f"the broker still holds {broker_backlog()}"


DOWN_SENT = 20


def test_conversations_sent_while_redis_is_down_are_stored_and_checked(
    client: Any, api_key: str, cluster: Any, report_figures: Any
) -> None:
    """With Redis down the database still takes conversations: each is stored with its run
    pending (the enqueue fails and is logged), and the sweeper sends the runs once Redis is
    back. Nothing needs Redis to be accepted."""
    started = time.monotonic()
    payloads = conversations(DOWN_SENT, "redis-down")
    external_ids = [p["external_id"] for p in payloads]
    cluster.beat()
    worker = cluster.worker()
    statuses: dict[int, int] = {}
    private_services.stop_redis()
    try:
        for payload in payloads:
            try:
                response = client.post(
                    "/api/v1/conversations",
                    data=json.dumps(payload),
                    content_type="application/json",
                    headers={"Authorization": f"Bearer {api_key}"},
                )
                code = response.status_code
            except Exception:  # the test client re-raises what the app did not answer
                code = 500
            statuses[code] = statuses.get(code, 0) + 1
    finally:
        down_seconds = round(time.monotonic() - started, 1)
        private_services.start_redis()

    accepted = statuses.get(201, 0)
    if accepted:
        wait_until(
            lambda: unfinished_runs(external_ids) == 0,
            timeout=RECOVER_SECONDS,
            what="the runs stored while Redis was down to be checked",
            logs=cluster,
        )
    alive = worker.alive()
    cluster.stop_all()
    audit = audit_conversations(external_ids)
    report_figures(
        {
            "sent": DOWN_SENT,
            "answers_while_redis_down": statuses,
            "checked_once": audit["checked_once"],
            "lost": audit["lost"],
            "duplicated": audit["duplicated"],
            "redis_down_s": down_seconds,
            "seconds": round(time.monotonic() - started, 1),
        }
    )
    assert statuses == {201: DOWN_SENT}, statuses
    assert audit["checked_once"] == DOWN_SENT and audit["lost"] == audit["duplicated"] == 0, audit["problems"]
    assert alive
