"""API keys: scopes, expiry, and a rate limit per key."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from checks.models import ApiKey, Conversation
from tests.conftest import load_example

pytestmark = pytest.mark.django_db


def test_a_key_without_the_ingest_scope_cannot_send(
    post_conversation: Any, project: Any, client: Any
) -> None:
    _, reader = ApiKey.issue(project=project, scopes=["read"])
    response = post_conversation(load_example("01"), key=reader)
    assert response.status_code == 403
    assert "scope" in response.json()["detail"]
    assert Conversation.objects.count() == 0
    assert (
        client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {reader}"}).status_code == 200
    )


def test_a_key_without_the_read_scope_cannot_read(post_conversation: Any, project: Any, client: Any) -> None:
    _, sender = ApiKey.issue(project=project, scopes=["ingest"])
    created = post_conversation(load_example("01"), key=sender)
    assert created.status_code == 201
    headers = {"Authorization": f"Bearer {sender}"}
    assert client.get(created.json()["findings_url"], headers=headers).status_code == 403
    assert post_conversation(load_example("01"), key=sender, path="/api/v1/check").status_code == 403


def test_an_expired_key_is_refused(post_conversation: Any, project: Any) -> None:
    _, old = ApiKey.issue(project=project, expires_at=timezone.now() - timedelta(minutes=1))
    assert post_conversation(load_example("01"), key=old).status_code == 401


def test_a_key_over_its_rate_gets_429_with_retry_after(
    post_conversation: Any, settings: Any, client: Any, api_key: str
) -> None:
    settings.RECEIPTS_API_RATE = "3/min"
    headers = {"Authorization": f"Bearer {api_key}"}
    for _ in range(3):
        assert client.get("/api/v1/conversations", headers=headers).status_code == 200
    limited = client.get("/api/v1/conversations", headers=headers)
    assert limited.status_code == 429
    assert 0 < int(limited["Retry-After"]) <= 60
    assert post_conversation(load_example("01")).status_code == 429
    assert Conversation.objects.count() == 0


def test_the_rate_is_counted_per_key(settings: Any, client: Any, project: Any, api_key: str) -> None:
    settings.RECEIPTS_API_RATE = "1/min"
    _, other = ApiKey.issue(project=project)
    assert (
        client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {api_key}"}).status_code == 200
    )
    assert (
        client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {other}"}).status_code == 200
    )


def test_a_cache_that_cannot_be_reached_does_not_stop_ingestion(
    post_conversation: Any, settings: Any
) -> None:
    """Rate limits count in Redis; with Redis gone the conversation is still stored."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    # Django swaps the cache backend when CACHES changes; nothing listens on port 1.
    assert post_conversation(load_example("01")).status_code == 201
    assert Conversation.objects.count() == 1
