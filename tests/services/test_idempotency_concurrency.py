"""Many clients sending one conversation at the same instant, over real HTTP, on PostgreSQL.

A live server (a thread per request, each with its own database connection) takes 50
simultaneous POSTs carrying one `Idempotency-Key`: exactly one does the work and the others
replay its answer. Then 20 simultaneous POSTs of one conversation without a key: one
creates it and the rest find it unchanged. No request may end in a 5xx.

The check each new conversation schedules goes to the broker (Redis in .ci/run); no worker
is needed for what is asserted here.
"""

from __future__ import annotations

import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.servers.basehttp import WSGIServer

from checks.models import ApiKey, CheckRun, Conversation, IdempotencyRecord, Payload, Project, Turn
from tests.conftest import load_example

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WITH_KEY = 50
WITHOUT_KEY = 20
REQUEST_SECONDS = 60

# The test server listens with a backlog of 10. Fifty connections opened at once overflow it,
# and the kernel then resets some of them before the server accepts them: a failure of the
# test's server, not of Receipts (gunicorn listens with a backlog of 2048). The live server
# starts after this module is imported, so it listens with room for every client here.
WSGIServer.request_queue_size = max(WSGIServer.request_queue_size, 2 * WITH_KEY)


def _require_postgresql() -> None:
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.fail(
            f"these tests need PostgreSQL (the engine is {engine}; "
            "set DATABASE_URL=postgres://postgres@127.0.0.1:5432/receipts)",
            pytrace=False,
        )


def _fire(
    url: str, body: bytes, headers: dict[str, str], count: int
) -> list[tuple[int, dict[str, str], Any]]:
    """`count` POSTs released together by a barrier; each answer as (status, headers, JSON)."""
    parts = urlsplit(url)
    barrier = threading.Barrier(count)

    def one(_: int) -> tuple[int, dict[str, str], Any]:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=REQUEST_SECONDS)
        try:
            connection.connect()  # connect first, so the barrier releases requests, not handshakes
            barrier.wait(timeout=REQUEST_SECONDS)
            connection.request("POST", parts.path, body=body, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw.decode("utf-8", "replace")
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count), timeout=REQUEST_SECONDS * 2))


@pytest.fixture
def key_and_project(transactional_db: Any) -> tuple[str, Project]:
    _require_postgresql()
    project = Project.objects.create(name="Concurrency", slug="concurrency")
    _, secret = ApiKey.issue(project=project, name="concurrency")
    return secret, project


def _headers(secret: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}", "Content-Type": "application/json", **extra}


def test_one_idempotency_key_sent_50_times_at_once_does_the_work_once(
    live_server: Any, key_and_project: tuple[str, Project]
) -> None:
    secret, project = key_and_project
    body = json.dumps(load_example("01")).encode()
    answers = _fire(
        live_server.url + "/api/v1/conversations",
        body,
        _headers(secret, **{"Idempotency-Key": "same-key-for-all"}),
        WITH_KEY,
    )

    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [201] * WITH_KEY, [(s, d) for s, _, d in answers if s != 201]
    bodies = [data for _, _, data in answers]
    assert all(data == bodies[0] for data in bodies), "every answer must be the first one's"
    assert len({data["id"] for data in bodies}) == 1
    assert len({data["run"]["id"] for data in bodies}) == 1
    replayed = [headers.get("idempotent-replayed") for _, headers, _ in answers]
    assert replayed.count("true") == WITH_KEY - 1, replayed
    assert replayed.count(None) == 1, replayed
    assert len({headers.get("location") for _, headers, _ in answers}) == 1

    assert Conversation.objects.filter(project=project).count() == 1
    assert CheckRun.objects.filter(project=project).count() == 1
    assert Payload.objects.filter(project=project).count() == 1
    assert IdempotencyRecord.objects.filter(project=project).count() == 1
    conversation = Conversation.objects.get(project=project)
    assert conversation.pk == bodies[0]["id"]
    assert Turn.objects.filter(conversation=conversation).count() == len(conversation.document["turns"])


def test_one_conversation_sent_20_times_at_once_without_a_key_is_stored_once(
    live_server: Any, key_and_project: tuple[str, Project]
) -> None:
    secret, project = key_and_project
    body = json.dumps(load_example("05")).encode()
    answers = _fire(live_server.url + "/api/v1/conversations", body, _headers(secret), WITHOUT_KEY)

    assert not [(s, d) for s, _, d in answers if s >= 500], "no request may fail on the server"
    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [200] * (WITHOUT_KEY - 1) + [201], [(s, d) for s, _, d in answers]
    assert sorted(data["status"] for _, _, data in answers) == ["created"] + ["unchanged"] * (WITHOUT_KEY - 1)
    assert len({data["id"] for _, _, data in answers}) == 1
    assert all(data["run"] is None for status, _, data in answers if status == 200)
    assert not any("idempotent-replayed" in headers for _, headers, _ in answers)

    assert Conversation.objects.filter(project=project).count() == 1
    assert CheckRun.objects.filter(project=project).count() == 1
    assert Payload.objects.filter(project=project).count() == 1
    assert IdempotencyRecord.objects.filter(project=project).count() == 0
