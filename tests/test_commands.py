"""The management commands the README names, and the health check."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from checks.models import ApiKey, Conversation, Membership, Project

pytestmark = pytest.mark.django_db


def test_apikey_create_makes_the_project_and_prints_the_key_last(client: Any) -> None:
    out, err = StringIO(), StringIO()
    call_command("apikey", "create", "--project", "Night shift", stdout=out, stderr=err)
    key = out.getvalue().strip().splitlines()[-1]
    project = Project.objects.get(name="Night shift")
    assert project.slug == "night-shift"
    stored = ApiKey.objects.get(project=project)
    assert stored.hashed == ApiKey.hash(key) and key not in stored.hashed  # only the hash is kept
    body = json.dumps({"external_id": "k1", "turns": [{"messages": [{"role": "user", "content": "hi"}]}]})
    response = client.post(
        "/api/v1/conversations",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201


def test_apikey_create_reuses_an_existing_project() -> None:
    for _ in range(2):
        call_command("apikey", "create", "--project", "Same", stdout=StringIO(), stderr=StringIO())
    assert Project.objects.filter(name="Same").count() == 1
    assert ApiKey.objects.count() == 2


def test_apikey_revoke_stops_the_key(client: Any) -> None:
    out = StringIO()
    call_command("apikey", "create", "--project", "P", stdout=out, stderr=StringIO())
    key = out.getvalue().strip()
    call_command("apikey", "revoke", key, stdout=StringIO())
    response = client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 401


def test_load_demo_loads_every_example_once_and_creates_a_reviewer(
    django_capture_on_commit_callbacks: Any,
) -> None:
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=out)
    assert Conversation.objects.count() == 14
    assert "username 'reviewer', password 'receipts-demo'" in out.getvalue()
    assert Membership.objects.get(user__username="reviewer").can_review

    again = StringIO()
    call_command("load_demo", stdout=again)
    assert "14 unchanged" in again.getvalue()
    assert Conversation.objects.count() == 14


def test_healthz_answers_200_when_the_database_answers(client: Any) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
