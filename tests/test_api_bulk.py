"""POST /api/v1/conversations/bulk: many conversations, one answer per item."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.models import CheckRun, Conversation, Finding
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

BULK = "/api/v1/conversations/bulk"


def test_it_answers_207_with_one_result_per_item(post_conversation: Any) -> None:
    post_conversation(load_example("02"))  # stored already: comes back unchanged
    changed = load_example("02")
    changed["title"] = "Renamed"
    items = [load_example("01"), load_example("02"), changed, {"turns": []}, load_example("05")]
    response = post_conversation(items, path=BULK)
    assert response.status_code == 207
    body = response.json()
    assert [i["status"] for i in body["items"]] == ["created", "unchanged", "conflict", "invalid", "created"]
    assert body["counts"] == {"created": 2, "unchanged": 1, "conflict": 1, "invalid": 1}
    invalid = body["items"][3]
    assert {e["path"] for e in invalid["errors"]} == {"$.external_id", "$.turns"}
    assert body["items"][0]["url"].endswith(f"/conversations/{body['items'][0]['id']}/")
    # Every stored item was checked; the refused ones left nothing behind.
    assert Conversation.objects.count() == 3
    assert set(CheckRun.objects.values_list("status", flat=True)) == {"done"}
    assert set(Finding.objects.flags().values_list("code", flat=True)) == {
        "unverified_action",
        "count_misstatement",
    }


def test_it_takes_json_lines_and_names_the_bad_line(post_conversation: Any) -> None:
    lines = "\n".join([json.dumps(load_example("01")), "", "{not json", json.dumps(load_example("05"))])
    response = post_conversation(None, raw=lines.encode(), path=BULK, content_type="application/x-ndjson")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "line 3"
    assert Conversation.objects.count() == 0

    good = "\n".join([json.dumps(load_example("01")), json.dumps(load_example("05"))])
    response = post_conversation(None, raw=good.encode(), path=BULK, content_type="application/x-ndjson")
    assert response.status_code == 207
    assert [i["external_id"] for i in response.json()["items"]] == ["ex-sencha", "ex-count"]


def test_it_keeps_each_jsonl_line_as_received(post_conversation: Any) -> None:
    from checks.models import Payload

    line = json.dumps(load_example("01"), indent=None, separators=(", ", ":  "))
    post_conversation(None, raw=line.encode(), path=BULK, content_type="application/x-ndjson")
    assert Payload.objects.get().body == line


def test_it_refuses_more_items_than_the_limit(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_BULK_MAX_ITEMS = 2
    response = post_conversation([load_example("01"), load_example("02"), load_example("05")], path=BULK)
    assert response.status_code == 413
    assert Conversation.objects.count() == 0


def test_it_refuses_a_body_over_the_bulk_limit(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_BULK_MAX_BYTES = 100
    response = post_conversation([load_example("01")], path=BULK)
    assert response.status_code == 413


def test_it_refuses_a_json_object_that_is_not_a_list(post_conversation: Any) -> None:
    response = post_conversation(load_example("01"), path=BULK)
    assert response.status_code == 400
    assert "array" in response.json()["errors"][0]["message"]
