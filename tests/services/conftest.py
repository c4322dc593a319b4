"""A real Celery worker on Redis, writing to the PostgreSQL test database.

These tests run only under `-m services` (.ci/run sets DATABASE_URL and REDIS_URL). Without
PostgreSQL or Redis they fail with the reason: they never pass by skipping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
CELERY = Path(sys.executable).with_name("celery")
WORKER_NAME = "receipts-services-test@%h"
READY_SECONDS = 60
STOP_SECONDS = 20


def require_real_services() -> None:
    """Fails (never skips) unless the database is PostgreSQL and the broker is Redis."""
    problems = []
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        problems.append(
            f"DATABASE_URL must point at PostgreSQL (the engine is {engine}; "
            "for example DATABASE_URL=postgres://postgres@127.0.0.1:5432/receipts)"
        )
    if not os.environ.get("REDIS_URL") or not settings.CELERY_BROKER_URL.startswith("redis"):
        problems.append("REDIS_URL must point at Redis (for example REDIS_URL=redis://127.0.0.1:6379/9)")
    if problems:
        pytest.fail("services tests need the real services: " + "; ".join(problems), pytrace=False)


def _database_url(db: dict[str, Any]) -> str:
    """A URL for the database pytest-django created, so the worker writes where the tests read."""
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{quote(db['NAME'], safe='')}"


class Worker:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no worker log)"
        return "\n".join(text.splitlines()[-lines:])

    def assert_alive(self) -> None:
        code = self.process.poll()
        if code is not None:
            pytest.fail(f"the Celery worker exited with {code}:\n{self.log_tail()}", pytrace=False)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        # The worker leads its own process group: its pool children go with it.
        pgid = self.process.pid
        try:
            os.killpg(pgid, signal.SIGTERM)  # warm shutdown: finish what is running
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            self.process.wait(10)
        except ProcessLookupError:
            pass


def _wait_until_ready(worker: Worker) -> None:
    from grounding_site.celery import app

    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        worker.assert_alive()
        replies = app.control.inspect(timeout=1.0).ping() or {}
        if any(name.startswith("receipts-services-test@") for name in replies):
            return
        time.sleep(0.5)
    worker.stop()
    pytest.fail(
        f"the Celery worker did not answer ping within {READY_SECONDS}s:\n{worker.log_tail()}", pytrace=False
    )


class WorkerSupervisor:
    """Starts the session's worker when a test first asks for it, after checking the services:
    a missing service is a failure of that test, reported with the reason."""

    def __init__(self, test_db: dict[str, Any], log: Path) -> None:
        self.test_db = test_db
        self.log = log
        self.worker: Worker | None = None

    def start(self) -> Worker:
        require_real_services()
        if self.worker is not None:
            self.worker.assert_alive()
            return self.worker
        from grounding_site.celery import app

        assert self.test_db["NAME"].startswith("test_"), self.test_db["NAME"]
        app.control.purge()  # messages left by an earlier session would point at other rows
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"CELERY_TASK_ALWAYS_EAGER", "PYTEST_XDIST_WORKER", "DJANGO_SETTINGS_MODULE"}
        }
        env.update(
            DATABASE_URL=_database_url(self.test_db),
            REDIS_URL=os.environ["REDIS_URL"],
            DJANGO_SETTINGS_MODULE="grounding_site.settings",
            PYTHONUNBUFFERED="1",
        )
        with self.log.open("wb") as out:
            process = subprocess.Popen(
                [
                    str(CELERY),
                    "-A",
                    "grounding_site",
                    "worker",
                    "--concurrency",
                    "2",
                    "--loglevel",
                    "INFO",
                    "--hostname",
                    WORKER_NAME,
                    "--without-gossip",
                    "--without-mingle",
                ],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.worker = Worker(process, self.log)
        _wait_until_ready(self.worker)
        return self.worker

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()


@pytest.fixture(scope="session")
def real_worker(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerSupervisor]:
    """The session's Celery worker (started by `real_worker.start()`), stopped before the test
    database is dropped: this fixture depends on django_db_setup, so it is torn down first."""
    from django.db import connection

    with django_db_blocker.unblock():
        test_db = dict(connection.settings_dict)
    supervisor = WorkerSupervisor(test_db, tmp_path_factory.mktemp("celery") / "worker.log")
    try:
        yield supervisor
    finally:
        supervisor.stop()


@pytest.fixture(autouse=True)
def _through_the_broker(_fast_and_eager: None) -> Iterator[None]:
    """Undoes the eager mode of tests/conftest.py: tasks go through Redis to the worker."""
    from grounding_site.celery import app

    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """Polls a condition until it holds or the time is up, then fails with what it last saw."""

    def wait(
        condition: Callable[[], Any], *, timeout: float = 60, what: str = "", worker: Worker | None = None
    ) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = condition()
            if last:
                return last
            if worker is not None:
                worker.assert_alive()
            time.sleep(0.25)
        tail = f"\nworker log:\n{worker.log_tail()}" if worker is not None else ""
        pytest.fail(f"timed out after {timeout}s waiting for {what or condition}{tail}", pytrace=False)

    return wait
