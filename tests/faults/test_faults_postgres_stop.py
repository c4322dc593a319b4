"""PostgreSQL stopped while conversations are being sent: the API answers 503 with Retry-After,
nothing is half-written, and once it is back every accepted conversation is there and checked.

Clients post through a live server, several at once, each resending after a 503 with the same
Idempotency-Key as the README asks. PostgreSQL is stopped twice in the middle of it: once
`immediate` (every session and transaction cut off, as in a crash, then recovered from the
WAL) and once `fast` (sessions ended, as in a restart). The worker and the scheduler live
through both; runs whose task failed while the database was away are swept up afterwards.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import pytest
import requests
from django.db import connection

from checks.models import CheckRun, Conversation, IdempotencyRecord, Payload, RunKind, Turn
from tests.faults import private_services
from tests.faults.faultkit import audit_conversations, conversations, unfinished_runs, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SENT = 150
CLIENTS = 3
OUTAGES = [(30, "immediate", 4.0), (90, "fast", 3.0)]  # (accepted before it, stop mode, seconds down)
SEND_SECONDS = 180
RECOVER_SECONDS = 180
MAX_TRIES = 200


class Sender(threading.Thread):
    """One client: posts its conversations one by one, resending each after a 503."""

    def __init__(self, url: str, api_key: str, payloads: list[dict[str, Any]], tally: Tally) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.api_key = api_key
        self.payloads = payloads
        self.tally = tally

    def run(self) -> None:
        with requests.Session() as session:
            for payload in self.payloads:
                self.send(session, payload)

    def send(self, session: requests.Session, payload: dict[str, Any]) -> None:
        headers = {"Authorization": f"Bearer {self.api_key}", "Idempotency-Key": payload["external_id"]}
        after_503 = False
        for _ in range(MAX_TRIES):
            try:
                response = session.post(
                    f"{self.url}/api/v1/conversations", json=payload, headers=headers, timeout=30
                )
            except requests.RequestException as exc:
                self.tally.add("connection_errors", repr(exc))
                time.sleep(0.2)
                continue
            if response.status_code == 503:
                retry_after = response.headers.get("Retry-After")
                self.tally.add("503_with_retry_after" if retry_after else "503_without_retry_after")
                after_503 = True
                # The server says 5 seconds; a test waits less, which only means more 503s.
                time.sleep(min(float(retry_after or 1), 0.3))
                continue
            if response.status_code == 201:
                body = response.json()
                self.tally.accept(payload["external_id"], body["id"])
                if response.headers.get("Idempotent-Replayed") == "true":
                    # Stored by a request whose answer was lost: the retry gets the first answer.
                    self.tally.add("replayed_after_503" if after_503 else "replayed")
                return
            self.tally.add(f"unexpected_{response.status_code}", response.text[:300])
            return
        self.tally.add("gave_up", payload["external_id"])


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.samples: dict[str, str] = {}
        self.accepted: dict[str, int] = {}

    def add(self, what: str, sample: str = "") -> None:
        with self.lock:
            self.counts[what] += 1
            if sample:
                self.samples.setdefault(what, sample)

    def accept(self, external_id: str, conversation_id: int) -> None:
        with self.lock:
            self.accepted[external_id] = conversation_id


def half_written(external_ids: list[str]) -> list[str]:
    """Conversations stored without all their parts: every turn of the document, the payload
    as sent, the check run; and idempotency records never completed."""
    problems = []
    for conversation in Conversation.objects.filter(external_id__in=external_ids):
        turns = Turn.objects.filter(conversation=conversation).count()
        payloads = Payload.objects.filter(conversation=conversation).count()
        runs = CheckRun.objects.filter(conversation=conversation, kind=RunKind.CHECKS).count()
        if turns != len(conversation.document["turns"]) or payloads != 1 or runs != 1:
            problems.append(f"{conversation.external_id}: {turns} turns, {payloads} payloads, {runs} runs")
    unfinished = IdempotencyRecord.objects.filter(status_code=0).count()
    if unfinished:
        problems.append(f"{unfinished} idempotency records never completed")
    return problems


def test_postgres_stopped_during_ingestion(
    live_server: Any, api_key: str, cluster: Any, settings: Any, report_figures: Any
) -> None:
    settings.RECEIPTS_API_RATE = "100000/min"
    started = time.monotonic()
    payloads = conversations(SENT, "pg")
    external_ids = [p["external_id"] for p in payloads]
    cluster.beat()
    worker = cluster.worker()
    tally = Tally()
    senders = [Sender(live_server.url, api_key, payloads[i::CLIENTS], tally) for i in range(CLIENTS)]
    for sender in senders:
        sender.start()

    outages = []
    for accepted_before, mode, seconds in OUTAGES:
        deadline = time.monotonic() + SEND_SECONDS
        while len(tally.accepted) < accepted_before and time.monotonic() < deadline:
            time.sleep(0.02)
        at = len(tally.accepted)
        stopped = time.monotonic()
        private_services.stop_postgres(mode=mode)
        time.sleep(seconds)
        private_services.start_postgres()
        outages.append({"mode": mode, "after_accepted": at, "down_s": round(time.monotonic() - stopped, 1)})

    for sender in senders:
        sender.join(SEND_SECONDS)
    still_sending = sum(sender.is_alive() for sender in senders)
    connection.close()  # this thread's connection died with the server

    wait_until(
        lambda: unfinished_runs(external_ids) == 0,
        timeout=RECOVER_SECONDS,
        what="the runs of the accepted conversations to finish",
        logs=cluster,
    )
    worker_alive = worker.alive()
    cluster.stop_all()

    stored = set(
        Conversation.objects.filter(external_id__in=external_ids).values_list("external_id", flat=True)
    )
    broken = half_written(external_ids)
    audit = audit_conversations(external_ids)
    answers = dict(tally.counts)
    figures = {
        "sent": SENT,
        "accepted_201": len(tally.accepted),
        "answers": answers,
        "stored": len(stored),
        "half_written": len(broken),
        "checked_once": audit["checked_once"],
        "lost": audit["lost"],
        "duplicated": audit["duplicated"],
        "duplicate_fingerprints": audit["duplicate_fingerprints"],
        "outages": outages,
        "runs_by_attempts": audit["attempts"],
        "seconds": round(time.monotonic() - started, 1),
    }
    report_figures(figures)
    assert still_sending == 0, "a client was still sending when the time was up"
    unexpected = {k: v for k, v in answers.items() if k not in ("503_with_retry_after", "replayed_after_503")}
    assert unexpected == {}, (unexpected, tally.samples)
    assert answers.get("503_with_retry_after", 0) > 0, "PostgreSQL was stopped but no request saw it"
    assert len(tally.accepted) == SENT
    # Every accepted conversation is there, under the id its 201 named; nothing else is.
    assert stored == set(external_ids)
    ids = dict(Conversation.objects.filter(external_id__in=external_ids).values_list("external_id", "pk"))
    assert ids == tally.accepted
    assert broken == [], broken
    assert audit["problems"] == [], audit["problems"]
    assert audit["checked_once"] == SENT
    assert worker_alive, "the worker died with the database instead of waiting for it"
