"""Probes: /healthz (the app and its database answer) and /readyz (it can do its work)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse

QUEUES = ("celery", "judge", "webhooks", "exports")


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the app answers and its database does; 503 otherwise."""
    try:
        _database()
    except DatabaseError as exc:
        return JsonResponse({"status": "unavailable", "database": str(exc)[:200]}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """200 when the database and the broker answer, with the depth of each queue; else 503."""
    body: dict[str, Any] = {"status": "ok"}
    try:
        _database()
        body["database"] = "ok"
    except DatabaseError as exc:
        body.update(status="unavailable", database=str(exc)[:200])
    try:
        body["queues"] = queue_depths()
        body["broker"] = "ok"
    except Exception as exc:  # any broker error means not ready; say which
        body.update(status="unavailable", broker=f"{type(exc).__name__}: {exc}"[:200])
    return JsonResponse(body, status=200 if body["status"] == "ok" else 503)


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def queue_depths() -> dict[str, int]:
    """Messages waiting per queue: Redis list lengths, or files in the embedded broker's folder."""
    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
        return {name: int(client.llen(name)) for name in QUEUES}
    folder = Path(str(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]))
    waiting = {name: 0 for name in QUEUES}
    for path in folder.glob("*.msg"):
        for name in QUEUES:
            if f".{name}." in path.name:
                waiting[name] += 1
    return waiting
