"""Freed memory is given back after large work (grounding_site/memory.py): after each Celery
task, and after a request with a large body (gunicorn.conf.py); and a worker does not import what
only requests use."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from grounding_site import memory

ROOT = Path(settings.BASE_DIR)


def test_release_returns_freed_memory_without_failing() -> None:
    freed = [bytes(1024) for _ in range(1000)]
    del freed
    memory.release()


def test_only_a_large_body_is_followed_by_a_release(monkeypatch: pytest.MonkeyPatch) -> None:
    conf: dict[str, Any] = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    calls: list[int] = []
    monkeypatch.setattr(memory, "release", lambda: calls.append(1))
    conf["post_request"](None, None, {"CONTENT_LENGTH": "10"}, None)
    assert calls == []
    conf["post_request"](None, None, {"CONTENT_LENGTH": str(memory.LARGE_BODY_BYTES)}, None)
    assert calls == [1]


# What a Celery worker loads at start, in a fresh interpreter as `celery -A grounding_site worker`
# would: the app, its settings and every task module, with Celery's own start-up checks.
WORKER_START = """
import sys
from grounding_site.celery import app
app.loader.import_default_modules()
app.loader.on_worker_init()
print(" ".join(sorted(sys.modules)))
"""


def test_a_worker_does_not_import_what_only_web_requests_need() -> None:
    # Each module a worker imports is resident in every pool process; the schema generator, the
    # REST framework's fields and the views serve requests, which a worker never answers.
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_SKIP_CHECKS", "DJANGO_SETTINGS_MODULE")}
    out = subprocess.run(
        [sys.executable, "-c", WORKER_START],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert "checks.tasks" in out  # the tasks were loaded: the probe is a worker's start
    heavy = {
        "drf_spectacular.plumbing",
        "rest_framework.fields",
        "checks.views.turns",
        "markdown",
        "pygments",
    }
    assert heavy.isdisjoint(out), sorted(heavy & set(out))


def test_the_schema_still_describes_api_keys(client: Any) -> None:
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
