"""Idempotency-Key: a replay gets the first answer, another body under the same key a 422."""

from __future__ import annotations

from typing import Any

import pytest

from checks.models import CheckRun, Conversation, IdempotencyRecord
from tests.conftest import load_example

pytestmark = pytest.mark.django_db


def test_a_replay_returns_the_first_response(post_conversation: Any) -> None:
    first = post_conversation(load_example("01"), headers={"Idempotency-Key": "k-1"})
    again = post_conversation(load_example("01"), headers={"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 201  # not the 200 "unchanged" of a plain resend
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert (Conversation.objects.count(), CheckRun.objects.count()) == (1, 1)


def test_the_same_key_with_another_body_is_422(post_conversation: Any) -> None:
    post_conversation(load_example("01"), headers={"Idempotency-Key": "k-2"})
    other = post_conversation(load_example("02"), headers={"Idempotency-Key": "k-2"})
    assert other.status_code == 422
    assert other.json()["errors"][0]["path"] == "Idempotency-Key"
    assert Conversation.objects.count() == 1


def test_a_refusal_is_replayed_too(post_conversation: Any) -> None:
    first = post_conversation({"turns": []}, headers={"Idempotency-Key": "k-3"})
    again = post_conversation({"turns": []}, headers={"Idempotency-Key": "k-3"})
    assert first.status_code == again.status_code == 400
    assert again.json() == first.json()


def test_keys_are_per_project_and_endpoint(post_conversation: Any, other_project: Any) -> None:
    from checks.models import ApiKey

    _, other_key = ApiKey.issue(project=other_project)
    post_conversation(load_example("01"), headers={"Idempotency-Key": "shared"})
    response = post_conversation(load_example("01"), key=other_key, headers={"Idempotency-Key": "shared"})
    assert response.status_code == 201
    inline = post_conversation(
        load_example("01"), path="/api/v1/check", headers={"Idempotency-Key": "shared"}
    )
    assert inline.status_code == 200
    assert IdempotencyRecord.objects.count() == 3


def test_an_overlong_key_is_refused(post_conversation: Any) -> None:
    response = post_conversation(load_example("01"), headers={"Idempotency-Key": "x" * 300})
    assert response.status_code == 400
    assert Conversation.objects.count() == 0
