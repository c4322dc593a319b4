"""POST /api/v1/check and GET /api/v1/capability-statement: answers now, stores nothing."""

from __future__ import annotations

from typing import Any

import pytest

from checks.models import ApiKey, Conversation
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

CHECK = "/api/v1/check"


def test_it_checks_a_conversation_inline_and_stores_nothing(post_conversation: Any) -> None:
    response = post_conversation(load_example("01"), path=CHECK)
    assert response.status_code == 200
    body = response.json()
    [finding] = body["findings"]
    assert (finding["code"], finding["claim"]["text"]) == ("unverified_action", "I've saved")
    assert finding["correction"].startswith("Note from Receipts")
    assert "provenance" in body and body["suite_version"] == "1.0.0"
    assert Conversation.objects.count() == 0


def test_it_stores_the_conversation_when_asked(post_conversation: Any) -> None:
    response = post_conversation(load_example("05"), path=CHECK, query="?store=true")
    assert response.json()["stored"]["status"] == "created"
    assert Conversation.objects.get().external_id == "ex-count"


def test_a_key_that_may_only_check_may_not_store(post_conversation: Any, project: Any) -> None:
    _, check_only = ApiKey.issue(project=project, name="gate", scopes=["check"])
    response = post_conversation(load_example("05"), path=CHECK, query="?store=true", key=check_only)
    assert response.status_code == 403
    assert response.json()["errors"] == [
        {"path": "store", "message": "needs a key with the ingest scope; leave it out to only check"}
    ]
    assert Conversation.objects.count() == 0
    # Without store=true the same key checks as before.
    assert post_conversation(load_example("05"), path=CHECK, key=check_only).status_code == 200


def test_it_refuses_an_invalid_conversation_by_path(post_conversation: Any) -> None:
    response = post_conversation({"external_id": "x", "turns": [{"messages": []}]}, path=CHECK)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.turns[0].messages"


def test_it_uses_the_projects_options(post_conversation: Any, project: Any) -> None:
    project.options = {"evidence": {"posture": "sometimes"}}
    project.save()
    response = post_conversation(load_example("01"), path=CHECK)
    assert response.status_code == 409
    assert "posture" in response.json()["errors"][0]["message"]


def test_the_capability_statement_lists_the_tools(client: Any, api_key: str) -> None:
    headers = {"Authorization": f"Bearer {api_key}"}
    some = client.get("/api/v1/capability-statement?tools=memory_search,rag.search", headers=headers).json()
    assert some["tools"] == ["memory_search", "rag.search"]
    assert "memory_search" in some["text"] and "rag.search" in some["text"]
    none = client.get("/api/v1/capability-statement?tools=", headers=headers).json()
    assert none["tools"] == [] and "NO tools" in none["text"]
