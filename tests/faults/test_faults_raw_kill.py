"""A worker killed with SIGKILL while it stores a batch of OTLP exports, again and again,
leaves every accepted trace stored once and checked once.

Traces go in through /v1/traces in rounds, each export answered as soon as it is kept; in
each round the worker is killed while it holds a lease on a batch of exports (its
transaction cut off before the batch commits), and a new one is started. Every third kill
takes only the pool processes. What the kills leave is recovered by the leases running out
(RECEIPTS_OTLP_LEASE_SECONDS) and the sweeper sending the exports to be taken again, and
made exact by storing a batch and marking its exports stored in one transaction.
"""

from __future__ import annotations

import copy
import json
import os
import random
import secrets
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from checks import raw_exports
from checks.models import Conversation, Payload, RawExport
from tests.faults.faultkit import (
    FAULT_ENV_DEFAULTS,
    audit_conversations,
    kill_in_turn,
    unfinished_runs,
    wait_until,
)
from tests.faults.faultkit import (
    poll as _poll,
)

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True)]

TEMPLATE = Path(settings.BASE_DIR) / "tests" / "ingest_payloads" / "peer_ingest.otlp.json"
ROUNDS = 21  # 14 kills of the whole worker, 7 of its pool processes
EXPORTS_PER_ROUND = 3
TRACES_PER_EXPORT = 5  # 315 traces in all
CLAIM_SECONDS = 60  # for a restarted worker to start and take a batch
RECOVER_SECONDS = 240


def lease_seconds() -> int:
    return int(
        os.environ.get("RECEIPTS_OTLP_LEASE_SECONDS", FAULT_ENV_DEFAULTS["RECEIPTS_OTLP_LEASE_SECONDS"])
    )


def export_of(traces: int, prefix: str) -> tuple[bytes, list[str]]:
    """An OTLP/JSON export of ``traces`` GenAI traces, each a conversation of its own (the
    test corpus's traces in turn, given new trace ids and conversation ids); with their ids."""
    template = json.loads(TEMPLATE.read_text())
    (group,) = template["resourceSpans"]
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for scope in group["scopeSpans"]:
        for span in scope["spans"]:
            by_trace.setdefault(span["traceId"], []).append(span)
    corpus = list(by_trace.values())
    spans: list[dict[str, Any]] = []
    names: list[str] = []
    for i in range(traces):
        trace, name = secrets.token_hex(16), f"{prefix}-{i:02d}"
        for span in copy.deepcopy(corpus[i % len(corpus)]):
            span["traceId"] = trace
            for attribute in span["attributes"]:
                if attribute["key"] == "gen_ai.conversation.id":
                    attribute["value"] = {"stringValue": name}
            spans.append(span)
        names.append(name)
    export = {"resourceSpans": [{**group, "scopeSpans": [{**group["scopeSpans"][0], "spans": spans}]}]}
    return json.dumps(export).encode(), names


def _leased_since(since: Any) -> bool:
    """A worker holds a lease it took after ``since`` on exports sent since then, and has not
    finished them."""
    taken_after = since + timedelta(seconds=lease_seconds())
    return RawExport.objects.filter(
        state="waiting", created_at__gte=since, lease_until__gt=taken_after
    ).exists()


def test_sigkilled_workers_store_every_accepted_trace_once(
    client: Any, api_key: str, cluster: Any, report_figures: Any
) -> None:
    started = time.monotonic()
    rng = random.Random(29)
    headers = {"Authorization": f"Bearer {api_key}"}
    external_ids: list[str] = []
    export_ids: list[int] = []
    cluster.beat()

    worker = None
    whole_kills = pool_kills = mid_batch = 0
    for round_ in range(ROUNDS):
        if worker is None or not worker.alive():
            worker = cluster.worker()
        since = timezone.now()
        for n in range(EXPORTS_PER_ROUND):
            data, names = export_of(TRACES_PER_EXPORT, f"raw-{round_:02d}-{n}")
            response = client.post("/v1/traces", data=data, content_type="application/json", headers=headers)
            assert response.status_code == 200 and response.json() == {}, response.content
            export_ids.append(int(response["Receipts-Export"]))
            external_ids += names

        # Wait for the worker to hold a batch it took in this round, then kill it there:
        # mid-batch, at a point that varies from decoding to the batch's commit.
        holding = _poll(lambda since=since: _leased_since(since), CLAIM_SECONDS)
        time.sleep(rng.uniform(0, 0.05))
        if kill_in_turn(worker, round_):
            pool_kills += 1
        else:
            whole_kills += 1
        if holding and _leased_since(since):
            mid_batch += 1  # the batch it held never committed: its lease must run out

    if worker is None or not worker.alive():
        worker = cluster.worker()
    wait_until(
        lambda: not RawExport.objects.filter(pk__in=export_ids, state="waiting").exists(),
        timeout=RECOVER_SECONDS,
        what="every export to be stored after the kills",
        logs=cluster,
    )
    wait_until(
        lambda: unfinished_runs(external_ids) == 0,
        timeout=RECOVER_SECONDS,
        what="every run to finish after the kills",
        logs=cluster,
    )
    time.sleep(1)
    cluster.stop_all()

    exports = list(RawExport.objects.filter(pk__in=export_ids))
    states = sorted({(e.state, json.dumps(e.counts)) for e in exports})
    attempts: dict[int, int] = {}
    for export in exports:
        attempts[export.attempts] = attempts.get(export.attempts, 0) + 1
    stored = Conversation.objects.filter(external_id__in=external_ids)
    payloads = dict(
        Payload.objects.filter(conversation__in=stored)
        .values_list("conversation__external_id")
        .annotate(n=Count("pk"))
    )
    audit = audit_conversations(external_ids)
    figures = {
        "traces_sent": len(external_ids),
        "exports_sent": len(export_ids),
        "stored_once": sum(1 for name in external_ids if payloads.get(name) == 1),
        "stored_twice_or_more": sum(1 for name in external_ids if payloads.get(name, 0) > 1),
        "not_stored": sum(1 for name in external_ids if name not in payloads),
        "checked_once": audit["checked_once"],
        "lost": audit["lost"],
        "duplicated": audit["duplicated"],
        "duplicate_fingerprints": audit["duplicate_fingerprints"],
        "worker_kills": whole_kills,
        "pool_kills": pool_kills,
        "mid_batch_kills": mid_batch,
        "workers_started": cluster.started,
        "exports_by_attempts": dict(sorted(attempts.items())),
        "seconds": round(time.monotonic() - started, 1),
    }
    report_figures(figures)
    assert states == [("stored", json.dumps({"created": TRACES_PER_EXPORT}))], states
    assert figures["stored_once"] == len(external_ids) == ROUNDS * EXPORTS_PER_ROUND * TRACES_PER_EXPORT
    assert audit["problems"] == [], audit["problems"]
    assert audit["checked_once"] == len(external_ids)
    assert audit["lost"] == audit["duplicated"] == audit["duplicate_fingerprints"] == 0
    assert whole_kills >= 14 and mid_batch >= 10, figures
    # Taken again alone after each death, none was refused as one that kills every worker.
    assert max(attempts) < raw_exports.MAX_ATTEMPTS, figures
