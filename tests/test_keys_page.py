"""The project's API keys page: create (shown once), list, revoke; admins only."""

from __future__ import annotations

from typing import Any

import pytest

from checks.models import ApiKey, AuditEvent

pytestmark = pytest.mark.django_db

URL = "/p/acme/keys"


def test_an_admin_creates_a_key_that_is_shown_once_and_works(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(URL, {"name": "helpdesk", "scopes": ["ingest", "read"], "expires": "30"})
    secret = response.context["secret"]
    assert secret.startswith("rcpt_") and secret in response.content.decode()
    key = ApiKey.objects.get()
    assert (key.name, key.scopes, key.hashed) == ("helpdesk", ["ingest", "read"], ApiKey.hash(secret))
    assert key.expires_at is not None
    assert secret not in client.get(URL).content.decode()  # never again
    assert key.prefix in client.get(URL).content.decode()
    assert (
        client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    )
    assert AuditEvent.objects.get().verb == "apikey.created"


def test_a_key_needs_a_scope(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(URL, {"name": "none"})
    assert response.status_code == 400 and "scopes" in response.context["error"]
    assert not ApiKey.objects.exists()


def test_an_admin_revokes_a_key(client: Any, alice: Any, project: Any) -> None:
    key, secret = ApiKey.issue(project=project)
    client.force_login(alice)
    client.post(f"{URL}/{key.pk}/revoke")
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert (
        client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    )
    assert AuditEvent.objects.get().verb == "apikey.revoked"


def test_only_admins_manage_keys(client: Any, bob: Any, olga: Any, project: Any) -> None:
    key, _ = ApiKey.issue(project=project)
    client.force_login(bob)
    assert client.get(URL).status_code == 403
    assert client.post(f"{URL}/{key.pk}/revoke").status_code == 403
    client.force_login(olga)
    assert client.get(URL).status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None
