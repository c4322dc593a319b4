"""Shared fixtures: named personas and a project with an API key.

alice is the project's admin, bob a second reviewer, vic a viewer, and olga belongs to
another project only. Checks run eagerly in these tests (a real worker runs them in the
services tests of .ci/run).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from checks.suite import judge as judge_module
from tests.live_server import OneRequestAtATime, shares_one_connection
from tests.suite.test_judge import JudgeServer, running_judge

EXAMPLES = Path(settings.BASE_DIR) / "demo"
# The tests' own judge and webhook receivers listen on 127.0.0.1, which requests to URLs a
# project chose may not reach unless the operator allows it; a test of that refusal sets
# the allow-list back to empty.
LOOPBACK = "127.0.0.1/32"


@pytest.fixture(scope="session", autouse=True)
def _live_server_in_turn() -> Iterator[None]:
    """On SQLite, the live server takes one request at a time (tests/live_server.py)."""
    from django.test.testcases import LiveServerThread

    if not shares_one_connection():
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LiveServerThread, "server_class", OneRequestAtATime)
        yield


@pytest.fixture(autouse=True)
def _loopback_receivers_allowed(settings: Any) -> Iterator[None]:
    settings.RECEIPTS_OUTBOUND_ALLOW = [LOOPBACK]
    # The suite, run on its own (as in tests/suite), reads it from the environment. A patch
    # of its own, so a test that undoes its monkeypatch midway keeps this one.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RECEIPTS_OUTBOUND_ALLOW", LOOPBACK)
        yield


@pytest.fixture(autouse=True)
def _fast_and_eager(settings: Any) -> None:
    from django.core.cache import cache

    from grounding_site.celery import app

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    app.conf.task_always_eager = True
    # An OTLP conversation is checked as soon as it is stored, not once its trace has settled.
    settings.RECEIPTS_OTLP_SETTLE_SECONDS = 0
    cache.clear()  # rate-limit counters must not carry over from one test to the next


@pytest.fixture(autouse=True)
def _audit_heads_apart(settings: Any, tmp_path: Path) -> None:
    # Each test's database numbers its projects from 1 again: the heads of their audit chains
    # must not meet in var/audit (nor in another test's, or another worker's).
    settings.RECEIPTS_AUDIT_DIR = tmp_path / "audit"


def load_example(name: str) -> dict[str, Any]:
    """An example conversation by its file name's start, such as '01' or '01_sencha'."""
    (path,) = [p for p in EXAMPLES.glob(f"{name}*.json") if p.name != "EXPECTED.json"]
    return json.loads(path.read_text())


@pytest.fixture
def project(db: Any) -> Any:
    from checks.models import Project

    return Project.objects.create(name="Acme support", slug="acme")


@pytest.fixture
def other_project(db: Any) -> Any:
    from checks.models import Project

    return Project.objects.create(name="Elsewhere", slug="elsewhere")


def _member(project: Any, username: str, role: str) -> Any:
    from django.contrib.auth import get_user_model

    from checks.models import Membership

    user = get_user_model().objects.create_user(username=username, password="password")
    if project is not None:
        Membership.objects.create(project=project, user=user, role=role)
    return user


@pytest.fixture
def alice(project: Any) -> Any:
    return _member(project, "alice", "admin")


@pytest.fixture
def bob(project: Any) -> Any:
    return _member(project, "bob", "reviewer")


@pytest.fixture
def vic(project: Any) -> Any:
    return _member(project, "vic", "viewer")


@pytest.fixture
def olga(other_project: Any) -> Any:
    return _member(other_project, "olga", "admin")


@pytest.fixture
def api_key(project: Any) -> str:
    from checks.models import ApiKey

    _, secret = ApiKey.issue(project=project, name="tests")
    return secret


@pytest.fixture
def post_conversation(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> Callable[..., Any]:
    """POSTs a payload with the project's key; on-commit callbacks (the check) run at once."""

    def post(
        payload: Any,
        *,
        key: str | None = None,
        query: str = "",
        raw: bytes | None = None,
        path: str = "/api/v1/conversations",
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Any:
        body = raw if raw is not None else json.dumps(payload).encode()
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(
                f"{path}{query}",
                data=body,
                content_type=content_type,
                headers={"Authorization": f"Bearer {key or api_key}", **(headers or {})},
            )

    return post


@pytest.fixture
def ingest(project: Any, django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Stores an example (or a payload) in the project and checks it, as the API would."""
    from checks import ingestion

    def ingest_(example: str | dict[str, Any], into: Any = None) -> Any:
        payload = load_example(example) if isinstance(example, str) else example
        with django_capture_on_commit_callbacks(execute=True):
            result = ingestion.ingest_conversation(
                project=into or project, payload=payload, body=json.dumps(payload)
            )
        return result.conversation

    return ingest_


@contextmanager
def tampering_with_the_audit_log() -> Iterator[None]:
    """Changing the log as a database superuser could: on PostgreSQL that means putting the
    session in replica mode first, where the trigger that refuses changes to it does not fire."""
    from django.db import connection

    postgres = connection.vendor == "postgresql"
    if postgres:
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
    try:
        yield
    finally:
        if postgres:
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = DEFAULT")


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    """A judge model on loopback, and none named by the environment; retries wait little."""
    monkeypatch.setattr(judge_module, "BACKOFF_S", 0.01)
    for name in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL", "RECEIPTS_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with running_judge() as server:
        yield server


def invented_parts(external_id: str, count: int) -> dict[str, Any]:
    """A conversation whose answer names one part its tool listed and ``count`` it invented:
    ``count`` unsupported_value flags on one turn."""
    parts = ", ".join(f"PX-{n}00{n}" for n in range(2, 2 + count))
    call = {"id": "c1", "type": "function", "function": {"name": "list_parts", "arguments": "{}"}}
    return {
        "external_id": external_id,
        "messages": [
            {"role": "user", "content": "Which parts are on order?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"parts": [{"sku": "PX-1001"}]}'},
            {"role": "assistant", "content": f"On order: PX-1001 and {parts}."},
        ],
    }
