"""The production path: deploy checks, probes, sign-in limits and structured logs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from typing import Any

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


def test_production_settings_pass_the_deploy_check() -> None:
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DEBUG": "false",
        "HTTPS": "true",
        "SECRET_KEY": "x" * 20 + "-long-random-production-secret-" + "y" * 30,
        "ALLOWED_HOSTS": "receipts.example.com",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_readyz_reports_the_database_the_broker_and_queue_depths(client: Any) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"] == "ok" and body["broker"] == "ok"
    assert set(body["queues"]) == {"celery", "judge", "webhooks", "exports"}


def test_readyz_is_503_when_the_broker_cannot_be_reached(client: Any, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable" and "broker" in response.json()


def test_sign_in_pauses_after_repeated_failures(client: Any, alice: Any, settings: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert client.post("/login/", {"username": "alice", "password": "wrong"}).status_code == 200
    locked = client.post("/login/", {"username": "alice", "password": "password"})
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0
    assert "Too many failed sign-ins" in locked.content.decode()
    # Another user from the same address is not paused.
    from tests.conftest import _member

    _member(None, "zoe", "viewer")
    assert client.post("/login/", {"username": "zoe", "password": "password"}).status_code == 302


def test_a_successful_sign_in_clears_the_count(client: Any, alice: Any, settings: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 2
    client.post("/login/", {"username": "alice", "password": "wrong"})
    assert client.post("/login/", {"username": "alice", "password": "password"}).status_code == 302
    client.post("/login/", {"username": "alice", "password": "wrong"})
    assert client.post("/login/", {"username": "alice", "password": "password"}).status_code == 302


def test_json_logs_are_one_object_a_line_with_extra_fields() -> None:
    from grounding_site.logs import JsonFormatter

    record = logging.makeLogRecord(
        {"name": "checks", "levelname": "INFO", "msg": "run %s done", "args": (7,), "run_id": 7}
    )
    line = JsonFormatter().format(record)
    assert json.loads(line) | {"time": None} == {
        "time": None,
        "level": "INFO",
        "logger": "checks",
        "message": "run 7 done",
        "run_id": 7,
    }


def test_on_postgresql_queries_start_no_parallel_workers_unless_asked() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL setting; .ci/run runs this on PostgreSQL")
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        assert cursor.fetchone()[0] == os.environ.get("DATABASE_PARALLEL_WORKERS", "0")
