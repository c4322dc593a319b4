"""Fault tests: real Celery workers on a private Redis and a private PostgreSQL, hurt on purpose.

They run only under `-m faults` (.ci/run starts the private services with
tests/faults/private_services.py and exports DATABASE_URL, REDIS_URL and
RECEIPTS_FAULTS_STATE before pytest starts, since Django reads its settings then). Without
them the tests fail with the reason; they never pass by skipping, and they never touch the
machine's shared PostgreSQL or Redis.

Each test prints its figures (conversations sent, checked once, lost, duplicated) as it ends
and again in a section of the terminal summary.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults import private_services
from tests.faults.faultkit import Cluster, database_url, require_private_services

FIGURES: list[tuple[str, dict[str, Any]]] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("fault test figures")
    for name, figures in FIGURES:
        terminalreporter.write_line(f"{name}: " + json.dumps(figures))


@pytest.fixture
def report_figures(request: pytest.FixtureRequest) -> Callable[[dict[str, Any]], None]:
    """Records a test's figures for the summary, and prints them at once for a live log."""

    def report(figures: dict[str, Any]) -> None:
        FIGURES.append((request.node.name, figures))
        capture = request.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            print(f"\n[faults] {request.node.name}: {json.dumps(figures)}", flush=True)

    return report


@pytest.fixture
def cluster(django_db_setup: Any, django_db_blocker: Any, tmp_path: Path) -> Iterator[Cluster]:
    """Workers and a scheduler for one test, all stopped (or killed) at its end, before the
    test database is flushed or dropped."""
    from django.db import connection

    state = require_private_services()
    with django_db_blocker.unblock():
        test_db = dict(connection.settings_dict)
    assert test_db["NAME"].startswith("test_"), test_db["NAME"]
    (tmp_path / "var").mkdir()
    group = Cluster(state, database_url(test_db), tmp_path)
    try:
        yield group
    finally:
        group.stop_all()
        # Services a test stopped are started again, so the next test (and teardown) find them.
        if not private_services.port_open(state["pg_port"]):
            private_services.start_postgres()
        if not private_services.redis_ready(private_services.load_state()):
            private_services.start_redis()
        # This process's connection may have died with a stopped PostgreSQL: the test
        # database's flush needs a fresh one.
        connection.close()


@pytest.fixture(autouse=True)
def _through_the_broker(_fast_and_eager: None) -> Iterator[None]:
    """Undoes the eager mode of tests/conftest.py: tasks go through Redis to the workers."""
    from grounding_site.celery import app

    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True
