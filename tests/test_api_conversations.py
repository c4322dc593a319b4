"""POST /api/v1/conversations and the findings endpoint."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from checks.models import CheckRun, Conversation, Finding, Message, Payload, ToolCall, Turn
from tests.conftest import load_example

pytestmark = pytest.mark.django_db


def test_it_creates_a_conversation_and_reports_its_finding(
    post_conversation: Any, client: Any, api_key: str
) -> None:
    """An example sent to the API is stored, checked, and its finding is served in the contract's shape."""
    response = post_conversation(load_example("01"))
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "created"
    assert body["url"].endswith(f"/p/acme/conversations/{body['id']}/")
    assert response["Location"] == body["url"]

    findings = client.get(body["findings_url"], headers={"Authorization": f"Bearer {api_key}"}).json()
    assert findings["external_id"] == "ex-sencha"
    assert findings["suite_version"] == "1.0.0"
    assert findings["run"]["status"] == "done"
    [finding] = findings["findings"]
    assert (finding["turn"], finding["checker"], finding["code"], finding["severity"]) == (
        0,
        "action_claims",
        "unverified_action",
        "flag",
    )
    answer = load_example("01")["turns"][0]["messages"][1]["content"]
    assert answer[finding["claim"]["start"] : finding["claim"]["end"]] == finding["claim"]["text"]
    assert finding["status"] == "open"


def test_it_keeps_the_raw_payload_exactly_as_received(post_conversation: Any) -> None:
    raw = b'{"external_id": "raw-1",   "turns": [{"messages": [{"role": "user", "content": "hi"}]}], "x": 1}'
    assert post_conversation(None, raw=raw).status_code == 201
    assert Payload.objects.get().body == raw.decode()


def test_it_accepts_the_flat_messages_form(post_conversation: Any) -> None:
    """A top-level `messages` list is split into turns at each user message."""
    payload = {
        "external_id": "flat-1",
        "messages": [
            {"role": "user", "content": "Remember sencha."},
            {"role": "assistant", "content": "I've saved it."},
            {"role": "user", "content": "Thanks"},
            {"role": "assistant", "content": "You're welcome."},
        ],
    }
    assert post_conversation(payload).status_code == 201
    assert list(Turn.objects.order_by("index").values_list("answer", flat=True)) == [
        "I've saved it.",
        "You're welcome.",
    ]
    assert Finding.objects.get().turn.index == 0


def test_it_stores_turns_messages_and_tool_calls_with_their_receipts(post_conversation: Any) -> None:
    assert post_conversation(load_example("04")).status_code == 201
    call = ToolCall.objects.get()
    assert (call.call_id, call.tool, call.has_result) == ("call-1", "memory_remember", True)
    assert call.receipt is not None and call.receipt["outcome"] == "denied"
    assert call.result == '{"error": "permission denied"}'
    assert Message.objects.count() == 4
    rows: list[Message | ToolCall | Turn] = [*Message.objects.all(), call, Turn.objects.get()]
    assert all(row.project_id == call.project_id for row in rows)


def test_it_answers_200_and_changes_nothing_when_the_same_content_is_resent(post_conversation: Any) -> None:
    payload = load_example("01")
    first = post_conversation(payload)
    again = post_conversation(payload)
    assert again.status_code == 200
    assert again.json()["status"] == "unchanged"
    assert again.json()["id"] == first.json()["id"]
    assert (Conversation.objects.count(), Turn.objects.count(), CheckRun.objects.count()) == (1, 1, 1)
    assert Payload.objects.count() == 1


def test_it_appends_new_turns_and_checks_them(post_conversation: Any) -> None:
    payload = load_example("02")
    post_conversation(payload)
    extended = copy.deepcopy(payload)
    extended["turns"].append(load_example("01")["turns"][0])
    response = post_conversation(extended)
    assert response.status_code == 200
    assert response.json()["status"] == "appended"
    assert list(Turn.objects.order_by("index").values_list("index", flat=True)) == [0, 1]
    assert CheckRun.objects.filter(status="done").count() == 2
    assert Finding.objects.get().turn.index == 1
    assert Payload.objects.count() == 2


def test_its_answer_describes_the_conversation_as_reading_it_back_does(
    post_conversation: Any, client: Any, api_key: str
) -> None:
    payload = load_example("02")
    extended = copy.deepcopy(payload)
    extended["turns"].append(load_example("01")["turns"][0])
    for sent, status in ((payload, "created"), (payload, "unchanged"), (extended, "appended")):
        answer = post_conversation(sent).json()
        assert answer.pop("status") == status
        run = answer.pop("run")
        read = client.get(
            f"/api/v1/conversations/{answer['id']}", headers={"Authorization": f"Bearer {api_key}"}
        )
        expected = dict(read.json())
        assert answer["turns"] == len(sent["turns"])
        # The run was pending when the answer was written and is done when read back.
        latest = expected.pop("latest_run")["id"]
        assert answer.pop("latest_run")["id"] == latest
        assert run is None if status == "unchanged" else run["id"] == latest
        assert answer == expected


def test_it_refuses_any_other_change_with_409(post_conversation: Any) -> None:
    payload = load_example("01")
    post_conversation(payload)
    changed = copy.deepcopy(payload)
    changed["turns"][0]["messages"][1]["content"] = "Something else."
    response = post_conversation(changed)
    assert response.status_code == 409
    assert response.json()["errors"][0]["path"] == "$.turns"
    assert Turn.objects.get().answer != "Something else."


def test_it_lists_every_problem_with_its_json_path_and_stores_nothing(post_conversation: Any) -> None:
    payload = {
        "turns": [
            {
                "messages": [
                    {"role": "robot", "content": "hi"},
                    {"role": "tool", "content": "{}"},
                ],
                "receipts": [{"call_id": "c1", "tool": "search", "result_count": -2}],
            }
        ]
    }
    response = post_conversation(payload)
    assert response.status_code == 400
    paths = {e["path"]: e["message"] for e in response.json()["errors"]}
    assert set(paths) == {
        "$.external_id",
        "$.turns[0].messages[0].role",
        "$.turns[0].messages[1].tool_call_id",
        "$.turns[0].receipts[0].result_count",
    }
    assert "user" in paths["$.turns[0].messages[0].role"]  # says what would be accepted
    assert Conversation.objects.count() == 0 and Payload.objects.count() == 0


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [(b'{"turns": [', "line 1"), (b"\xff\xfe", "UTF-8"), (b"[1, 2]", "JSON object")],
)
def test_it_refuses_a_body_that_is_not_a_json_object(
    post_conversation: Any, raw: bytes, fragment: str
) -> None:
    response = post_conversation(None, raw=raw)
    assert response.status_code == 400
    assert fragment in json.dumps(response.json())


def test_it_keeps_invalid_tool_arguments_raw(post_conversation: Any) -> None:
    payload = load_example("03")
    payload["turns"][0]["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"text": oops'
    assert post_conversation(payload).status_code == 201
    assert ToolCall.objects.get().arguments == '{"text": oops'


def test_it_refuses_a_body_over_the_limit_with_413(post_conversation: Any, settings: Any) -> None:
    settings.RECEIPTS_MAX_BODY_BYTES = 200
    payload = load_example("01")
    payload["title"] = "x" * 500
    response = post_conversation(payload)
    assert response.status_code == 413
    assert "RECEIPTS_MAX_BODY_BYTES" in response.json()["detail"]
    assert Conversation.objects.count() == 0


def test_it_names_the_accepted_formats_for_an_unknown_one(post_conversation: Any) -> None:
    response = post_conversation(load_example("01"), query="?format=fax")
    assert response.status_code == 400
    assert "native" in response.json()["errors"][0]["message"]


def test_it_refuses_a_wrong_or_revoked_key(post_conversation: Any, project: Any) -> None:
    from django.utils import timezone

    from checks.models import ApiKey

    assert post_conversation(load_example("01"), key="rcpt_not-a-real-key").status_code == 401
    key, secret = ApiKey.issue(project=project)
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    assert post_conversation(load_example("01"), key=secret).status_code == 401
    assert Conversation.objects.count() == 0


def test_it_needs_a_key(client: Any) -> None:
    response = client.post("/api/v1/conversations", data="{}", content_type="application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_key_sees_only_its_own_projects_conversations(
    post_conversation: Any, client: Any, other_project: Any
) -> None:
    from checks.models import ApiKey

    conversation_id = post_conversation(load_example("01")).json()["id"]
    _, other_key = ApiKey.issue(project=other_project)
    headers = {"Authorization": f"Bearer {other_key}"}
    assert client.get(f"/api/v1/conversations/{conversation_id}/findings", headers=headers).status_code == 404
    assert client.get("/api/v1/conversations?external_id=ex-sencha", headers=headers).json() == []


def test_it_finds_a_conversation_by_external_id(post_conversation: Any, client: Any, api_key: str) -> None:
    post_conversation(load_example("01"))
    post_conversation(load_example("02"))
    found = client.get(
        "/api/v1/conversations?external_id=ex-refusal", headers={"Authorization": f"Bearer {api_key}"}
    ).json()
    assert [c["external_id"] for c in found] == ["ex-refusal"]


def test_a_member_reads_findings_with_a_session(
    post_conversation: Any, client: Any, alice: Any, olga: Any
) -> None:
    conversation_id = post_conversation(load_example("01")).json()["id"]
    client.force_login(alice)
    assert len(client.get(f"/api/v1/conversations/{conversation_id}/findings").json()["findings"]) == 1
    client.force_login(olga)
    assert client.get(f"/api/v1/conversations/{conversation_id}/findings").status_code == 404


def test_the_openapi_schema_and_docs_are_served(client: Any) -> None:
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"})
    assert schema.status_code == 200
    assert "/api/v1/conversations" in schema.content.decode()
    docs = client.get("/api/v1/docs")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_the_openapi_schema_is_valid_and_complete() -> None:
    """Every operation documents its input and output; a warning fails the build."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    assert "bearer" in out.getvalue()


def test_it_refuses_a_tool_message_that_answers_no_call(post_conversation: Any) -> None:
    payload = load_example("03")
    payload["turns"][0]["messages"][2]["tool_call_id"] = "call-9"
    response = post_conversation(payload)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "$.turns[0].messages[2].tool_call_id" and "call-9" in error["message"]
    assert Conversation.objects.count() == 0


def test_it_refuses_two_calls_with_one_id_in_a_turn(post_conversation: Any) -> None:
    payload = load_example("03")
    call = payload["turns"][0]["messages"][1]["tool_calls"][0]
    payload["turns"][0]["messages"][1]["tool_calls"].append(call)
    response = post_conversation(payload)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.turns[0].messages[1].tool_calls[1].id"


def _reused_call_id_transcript() -> dict[str, Any]:
    """An OpenAI chat transcript whose model reused call_X once its first call was answered."""

    def call(name: str, arguments: str) -> dict[str, Any]:
        return {"id": "call_X", "type": "function", "function": {"name": name, "arguments": arguments}}

    return {
        "external_id": "reused-id",
        "messages": [
            {"role": "user", "content": "Move reservation ZFA04Y to flight HAT170."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("get_reservation_details", '{"id": "ZFA04Y"}')],
            },
            {"role": "tool", "tool_call_id": "call_X", "content": '{"flights": ["HAT001"]}'},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("update_reservation_flights", '{"flights": ["HAT170"]}')],
            },
            {"role": "tool", "tool_call_id": "call_X", "content": '{"flights": ["HAT170"]}'},
            {"role": "assistant", "content": "Done: ZFA04Y is now on HAT170."},
        ],
    }


def test_it_stores_each_call_of_a_reused_id_beside_its_own_result_and_receipt(post_conversation: Any) -> None:
    """A reused id is accepted (CONTRACT.md §6) and each stored call keeps the result that
    answered it and the receipt derived from that result."""
    response = post_conversation(_reused_call_id_transcript(), query="?format=openai")
    assert response.status_code == 201, response.json()
    calls = ToolCall.objects.order_by("id")
    assert [(c.call_id, c.tool, c.arguments, c.request_seq, c.result_seq, c.result) for c in calls] == [
        ("call_X", "get_reservation_details", '{"id": "ZFA04Y"}', 1, 2, '{"flights": ["HAT001"]}'),
        ("call_X", "update_reservation_flights", '{"flights": ["HAT170"]}', 3, 4, '{"flights": ["HAT170"]}'),
    ]
    assert [(c.receipt["tool"], c.receipt["handle"]) for c in calls if c.receipt is not None] == [
        ("get_reservation_details", "r1"),
        ("update_reservation_flights", "r2"),
    ]


def test_it_refuses_an_answer_to_a_call_already_answered(post_conversation: Any) -> None:
    """A tool message must answer a call still waiting for its result; the error names it."""
    payload = _reused_call_id_transcript()
    payload["messages"].insert(5, dict(payload["messages"][4]))
    response = post_conversation(payload, query="?format=openai")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "$.messages[5].tool_call_id" and "call_X" in error["message"]
    assert Conversation.objects.count() == 0


def test_call_ids_may_recur_in_later_turns(post_conversation: Any) -> None:
    """Runtimes that number calls afresh each turn are accepted."""
    payload = load_example("03")
    payload["turns"].append(load_example("03")["turns"][0])
    assert post_conversation(payload).status_code == 201


def test_it_refuses_json_nested_too_deeply(post_conversation: Any) -> None:
    raw = b'{"external_id": "deep", "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = post_conversation(None, raw=raw)
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    ("fragment", "path"),
    [
        ('"title": "a\\u0000b"', "$.title"),
        ('"metadata": {"k": NaN}', "$.metadata.k"),
        ('"metadata": {"k": "\\ud800"}', "$.metadata.k"),
    ],
)
def test_values_no_database_can_store_are_a_400_by_path(
    post_conversation: Any, fragment: str, path: str
) -> None:
    raw = (
        '{"external_id": "u", ' + fragment + ', "turns": [{"messages": [{"role": "user", "content": "hi"}]}]}'
    )
    response = post_conversation(None, raw=raw.encode())
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == [path]
    assert Conversation.objects.count() == 0


RESPONSES_BODY = '"input": "hi", "output": [{"type": "message", "role": "assistant", "content": "ok"}]'
MESSAGES_BODY = '"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]'


@pytest.mark.parametrize("text", ["\\ud800", "a\\u0000b"], ids=["surrogate", "nul"])
@pytest.mark.parametrize(
    ("fmt", "fields", "path"),
    [
        ("responses", '"external_id": "{}"', "$.external_id"),
        ("responses", '"external_id": "r", "previous_response_id": "{}"', "$.previous_response_id"),
        ("responses", '"id": "{}", "object": "response"', "$.id"),
        ("openai", '"external_id": "{}"', "$.external_id"),
        ("anthropic", '"external_id": "{}"', "$.external_id"),
        ("native", '"external_id": "{}"', "$.external_id"),
    ],
)
def test_a_name_no_database_can_store_is_a_400_by_path_in_every_format(
    post_conversation: Any, fmt: str, fields: str, path: str, text: str
) -> None:
    """A Responses chain looked its names up (external_id, previous_response_id, a response's
    id) before the payload was checked for what a database cannot hold: the lookup failed
    (a 500) on an unpaired surrogate, and on U+0000 on PostgreSQL. Every format is checked
    before any lookup, one request or many."""
    body = MESSAGES_BODY if fmt != "responses" else RESPONSES_BODY
    raw = "{" + fields.format(text) + ", " + body + "}"
    response = post_conversation(None, raw=raw.encode(), query=f"?format={fmt}")
    assert response.status_code == 400, response.content
    assert [e["path"] for e in response.json()["errors"]] == [path]
    bulk = post_conversation(
        None, raw=("[" + raw + "]").encode(), query=f"?format={fmt}", path="/api/v1/conversations/bulk"
    )
    assert bulk.status_code in (200, 207), bulk.content
    [item] = bulk.json()["items"]
    assert (item["status"], [e["path"] for e in item["errors"]]) == ("invalid", [path])
    if path == "$.external_id":  # answered with what it can carry
        assert item["external_id"] == {"\\ud800": "\ufffd", "a\\u0000b": "a\ufffdb"}[text]
    assert Conversation.objects.count() == 0


def test_an_otlp_conversation_id_no_database_can_store_is_answered_not_a_500(
    client: Any, api_key: str
) -> None:
    """The same class in an OTLP export: the export's answer named the conversation it
    refused by its id, which the answer could not encode."""
    export = (Path(__file__).parent / "ingest_payloads" / "peer_ingest.otlp.json").read_text()
    named = re.sub(r'("gen_ai.conversation.id","value":\{"stringValue":")[^"]*"', r'\1\\ud800"', export)
    assert named != export
    headers = {"Authorization": f"Bearer {api_key}"}
    response = client.post(
        "/v1/traces", data=named.encode(), content_type="application/json", headers=headers
    )
    assert response.status_code == 200
    message = response.json()["partialSuccess"]["errorMessage"]
    # Named as U+FFFD, whichever step (the reader or ingestion) refuses it.
    assert message.startswith("\ufffd: ") and "U+0000 or an unpaired surrogate" in message
    assert Conversation.objects.count() == 0


def test_listing_conversations_groups_by_no_stored_document(
    post_conversation: Any, client: Any, api_key: str
) -> None:
    """The list counts each conversation's turns without grouping by its columns: a GROUP BY
    over the stored document (and raw payload columns) made a list of them take minutes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for name in ("01", "05"):
        assert post_conversation(load_example(name)).status_code == 201
    with CaptureQueriesContext(connection) as queries:
        listed = client.get("/api/v1/conversations", headers={"Authorization": f"Bearer {api_key}"})
    assert listed.status_code == 200
    assert sorted(item["turns"] for item in listed.json()) == [1, 1]
    for query in queries.captured_queries:
        sql = query["sql"]
        assert "GROUP BY" not in sql or "document" not in sql.split("GROUP BY", 1)[1], sql
        assert '"checks_conversation"."document"' not in sql, sql  # not read for a list either


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic", "native"])
def test_a_role_that_is_not_text_is_named_not_a_500(post_conversation: Any, fmt: str) -> None:
    message = {"role": ["user"], "content": "hi"}
    payload = {"external_id": "odd-role", "messages": [message], "input": [message]}
    response = post_conversation(payload, query=f"?format={fmt}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["message"].startswith("must be one of")
