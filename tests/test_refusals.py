"""Nothing dropped in silence: what a key sent that gave no conversation is kept, with why and
the payload's shape (never its content), and listed per key on the project's Refusals page."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from django.urls import reverse

from checks.models import ApiKey, Conversation, Refusal

pytestmark = pytest.mark.django_db

SECRET_WORDS = "my card number is 4111-1111-1111-1111"


def no_genai_export() -> bytes:
    """Spans an instrumentation that records no message content sends: nothing to store."""
    span = {
        "traceId": secrets.token_hex(16),
        "spanId": secrets.token_hex(8),
        "name": "chat gpt-4o",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            {"key": "llm.request.type", "value": {"stringValue": "chat"}},
            {"key": "app.note", "value": {"stringValue": SECRET_WORDS}},
        ],
    }
    scope = {"scope": {"name": "acme.instrumentation"}, "spans": [span]}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}).encode()


def post(client: Any, key: str, path: str, body: bytes, **headers: str) -> Any:
    return client.post(
        path,
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}", **headers},
    )


def page(client: Any, user: Any) -> Any:
    client.force_login(user)
    return client.get(reverse("refusals", args=["acme"]))


def test_it_lists_a_refused_export_with_its_reason_and_shape_never_its_content(
    client: Any, api_key: str, vic: Any
) -> None:
    answer = post(client, api_key, "/v1/traces", no_genai_export()).json()
    assert answer["partialSuccess"]["rejectedSpans"] == "1"

    response = page(client, vic)  # a viewer: any member may read it

    assert response.status_code == 200
    html = response.content.decode()
    refusal = Refusal.objects.get()
    assert refusal.reason == answer["partialSuccess"]["errorMessage"] and refusal.status_code == 200
    assert refusal.api_key == ApiKey.objects.get()
    assert refusal.shape["span_names"] == ["chat gpt-4o"]
    assert refusal.shape["scopes"] == ["acme.instrumentation"]
    assert refusal.shape["attribute_keys"] == ["app.note", "llm.request.type"]
    assert "/v1/traces" in html and "app.note" in html and "acme.instrumentation" in html
    assert f"{ApiKey.objects.get().prefix}…" in html
    assert "4111" not in html and "4111" not in json.dumps(refusal.shape)


def test_a_rest_refusal_is_kept_though_its_ingestion_rolled_back(client: Any, api_key: str, vic: Any) -> None:
    body = json.dumps(
        {"external_id": "x1", "turns": [{"messages": [{"role": "robot", "content": SECRET_WORDS}]}]}
    )

    response = post(client, api_key, "/api/v1/conversations", body.encode(), **{"Idempotency-Key": "k-1"})

    assert response.status_code == 400
    assert not Conversation.objects.exists()
    refusal = Refusal.objects.get()
    assert refusal.status_code == 400 and refusal.endpoint == "/api/v1/conversations"
    assert "$.turns[0].messages[0].role" in refusal.reason
    assert refusal.shape["keys"] == ["external_id", "turns"] and refusal.shape["turns_keys"] == ["messages"]
    assert "4111" not in json.dumps(refusal.shape)
    # Replayed under its Idempotency-Key, it is answered again but not counted twice.
    assert (
        post(
            client, api_key, "/api/v1/conversations", body.encode(), **{"Idempotency-Key": "k-1"}
        ).status_code
        == 400
    )
    assert Refusal.objects.count() == 1
    assert "$.turns[0].messages[0].role" in page(client, vic).content.decode()


def test_a_refused_key_no_database_keeps_is_stored_in_its_place(client: Any, api_key: str, vic: Any) -> None:
    """A key holding U+0000 (or an unpaired surrogate) is refused for it; the refusal quotes the
    shape all the same, with the character replaced, where PostgreSQL refused to store it."""
    body = '{"external_id": "x2", "a\\u0000b": 1, "\\ud853x": 2, "messages": []}'

    response = post(client, api_key, "/api/v1/conversations", body.encode(), **{"Idempotency-Key": "k-2"})

    assert response.status_code == 400
    refusal = Refusal.objects.get()
    assert "U+0000 or an unpaired surrogate" in refusal.reason
    assert "a\ufffdb" in refusal.shape["keys"] and "\ufffdx" in refusal.shape["keys"]
    assert page(client, vic).status_code == 200


def test_refused_items_of_a_bulk_request_are_kept_with_their_count(client: Any, api_key: str) -> None:
    good = {"external_id": "ok", "messages": [{"role": "user", "content": "hi"}]}
    bad = {"external_id": "bad", "messages": "not a list"}
    response = post(client, api_key, "/api/v1/conversations/bulk", json.dumps([good, bad, bad]).encode())

    assert response.status_code == 207
    refusal = Refusal.objects.get()
    assert refusal.rejected == 2 and refusal.reason.startswith("2 of 3 items refused: item 1 (bad): invalid")
    assert refusal.shape["items"] == 3 and refusal.shape["item_keys"] == ["external_id", "messages"]


def test_refusals_are_listed_per_key(client: Any, api_key: str, project: Any, vic: Any) -> None:
    _, other = ApiKey.issue(project=project, name="staging exporter")
    post(client, api_key, "/v1/traces", no_genai_export())
    post(client, other, "/v1/traces", b"{not json")

    html = page(client, vic).content.decode()

    assert "staging exporter" in html and "tests" in html
    assert Refusal.objects.get(status_code=400).api_key.name == "staging exporter"
    assert html.count("<section") == 2


def test_a_project_keeps_only_its_newest_refusals(client: Any, api_key: str, settings: Any) -> None:
    settings.RECEIPTS_REFUSALS_KEPT = 3
    made = []
    for n in range(5):
        post(client, api_key, "/api/v1/conversations", json.dumps({"external_id": f"r{n}"}).encode())
        made.append(Refusal.objects.latest("id").pk)

    assert sorted(Refusal.objects.values_list("id", flat=True)) == made[-3:]


def test_outsiders_get_404_and_strangers_are_sent_to_sign_in(client: Any, api_key: str, olga: Any) -> None:
    post(client, api_key, "/v1/traces", no_genai_export())
    assert page(client, olga).status_code == 404
    client.logout()
    response = client.get(reverse("refusals", args=["acme"]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_keys_page_links_to_it(client: Any, alice: Any) -> None:
    client.force_login(alice)
    html = client.get(reverse("keys", args=["acme"])).content.decode()
    assert reverse("refusals", args=["acme"]) in html
