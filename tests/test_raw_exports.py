"""Raw-first OTLP: /v1/traces and /v1/logs answer once the export is kept, workers store it.

These tests turn Celery's eager mode off, so an accepted export waits as a worker would find
it; ``raw_exports.store_batch`` is then what the worker's task runs. The fault tests
(tests/faults/test_faults_raw_kill.py) kill real workers in the middle of it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from checks import checking, raw_exports
from checks.models import ApiKey, CheckRun, Conversation, Message, Payload, RawExport, Refusal, ToolCall
from tests.otlp_json import ORDER_TEXT, QUESTION, body, logs, protobuf, record, span, trace_id, traces

pytestmark = pytest.mark.django_db

PROTOBUF = "application/x-protobuf"


@pytest.fixture
def workers_behind() -> Iterator[None]:
    """Tasks are sent to workers, not run in the request: an export waits to be stored."""
    from grounding_site.celery import app

    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def chat(
    trace: str, answer: str = "It has 2 items and has shipped.", *, before: tuple[str, ...] = (), at: int = 0
) -> dict[str, Any]:
    """A chat span carrying its messages: one conversation, named by its trace. ``before``
    are the answers of earlier calls, each followed by a user's "Go on.", in its input."""
    text = lambda role, content: {"role": role, "parts": [{"type": "text", "content": content}]}  # noqa: E731
    messages = [text("user", QUESTION)]
    for earlier in before:
        messages += [text("assistant", earlier), text("user", "Go on.")]
    return span(
        trace,
        "chat m",
        at,
        at + 10,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps([text("assistant", answer)]),
        },
    )


def post(client: Any, key: str, data: bytes, *, path: str = "/v1/traces", **headers: str) -> Any:
    content_type = headers.pop("content_type", "application/json")
    return client.post(
        path, data=data, content_type=content_type, headers={"Authorization": f"Bearer {key}", **headers}
    )


def status_of(client: Any, key: str, response: Any) -> Any:
    export = response["Receipts-Export"]
    return client.get(f"/api/v1/otlp-exports/{export}", headers={"Authorization": f"Bearer {key}"})


def test_an_export_is_answered_before_its_rows_exist_and_stored_by_a_worker(
    client: Any, api_key: str, workers_behind: None
) -> None:
    data = protobuf(traces([chat("one"), chat("two")]))
    response = post(client, api_key, data, content_type=PROTOBUF)
    assert response.status_code == 200
    assert ExportTraceServiceResponse.FromString(response.content) == ExportTraceServiceResponse()
    export = RawExport.objects.get(pk=response["Receipts-Export"])
    assert export.state == "waiting" and bytes(export.body) == data  # kept exactly as received
    assert export.records == 2 and export.size == len(data)
    assert not Conversation.objects.exists()
    waiting = status_of(client, api_key, response).json()
    assert waiting["state"] == "waiting" and waiting["endpoint"] == "/v1/traces"
    stats = client.get("/api/v1/stats", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert stats["exports_waiting"] == 1 and stats["conversations"] == 0

    assert [e.pk for e in raw_exports.store_batch()] == [export.pk]

    assert Conversation.objects.count() == 2
    assert set(Payload.objects.values_list("export", flat=True)) == {export.pk}
    stored = status_of(client, api_key, response).json()
    assert stored["state"] == "stored" and stored["rejected"] == 0 and stored["reason"] == ""
    assert stored["conversations"] == {"created": 2}
    assert (
        client.get("/api/v1/stats", headers={"Authorization": f"Bearer {api_key}"}).json()["exports_waiting"]
        == 0
    )


def test_a_log_export_is_named_by_its_header_too(client: Any, api_key: str, workers_behind: None) -> None:
    records = [record("t", "chat", 1, "gen_ai.user.message", {"content": QUESTION})]
    response = post(client, api_key, body(logs(records)), path="/v1/logs")
    assert response.status_code == 200 and response.json() == {}
    assert status_of(client, api_key, response).json()["endpoint"] == "/v1/logs"


@pytest.mark.parametrize(
    ("data", "path", "encoding", "code", "said"),
    [
        pytest.param(body(logs([])), "/v1/traces", "", 400, "send it to /v1/logs", id="logs-to-traces"),
        pytest.param(
            body(traces([chat("t")])), "/v1/logs", "", 400, "send it to /v1/traces", id="traces-to-logs"
        ),
        pytest.param(
            body(traces([chat("a"), chat("b")])), "/v1/traces", "", 413, "RECEIPTS_OTLP_MAX_SPANS", id="spans"
        ),
        pytest.param(
            gzip.compress(b"{}", mtime=0) * 3,
            "/v1/traces",
            "gzip",
            413,
            "RECEIPTS_OTLP_MAX_GZIP_MEMBERS",
            id="gzip-members",
        ),
        pytest.param(b"{}", "/v1/traces", "br", 400, "Content-Encoding 'br' is not supported", id="encoding"),
        pytest.param(b"\x00\xffnot protobuf", "/v1/logs", "", 400, "protobuf", id="framing"),
    ],
)
def test_what_must_answer_at_once_is_a_4xx_and_nothing_waits(
    client: Any,
    api_key: str,
    settings: Any,
    workers_behind: None,
    data: bytes,
    path: str,
    encoding: str,
    code: int,
    said: str,
) -> None:
    settings.RECEIPTS_OTLP_MAX_SPANS = 1
    settings.RECEIPTS_OTLP_MAX_GZIP_MEMBERS = 2
    headers = {"Content-Encoding": encoding} if encoding else {}
    content_type = PROTOBUF if data.startswith(b"\x00") else "application/json"
    response = post(client, api_key, data, path=path, content_type=content_type, **headers)
    assert response.status_code == code, response.content
    assert said in json.dumps(response.json())
    assert "Receipts-Export" not in response
    assert not RawExport.objects.exists()
    assert Refusal.objects.get().status_code == code


def _bad_utf8_export() -> bytes:
    """A protobuf export whose framing and counts are sound, but whose span name is not
    UTF-8: only building the export finds that, which the request does not do."""
    request = ExportTraceServiceRequest()
    one = request.resource_spans.add().scope_spans.add().spans.add()
    one.name, one.trace_id, one.span_id = "AB", b"\x01" * 16, b"\x02" * 8
    return request.SerializeToString().replace(b"AB", b"\xff\xfe")


def test_an_export_found_invalid_later_is_refused_with_the_reason(
    client: Any, api_key: str, alice: Any, workers_behind: None
) -> None:
    response = post(client, api_key, _bad_utf8_export(), content_type=PROTOBUF)
    assert response.status_code == 200  # accepted: the walk of its wire format finds nothing wrong

    raw_exports.store_batch()

    refused = status_of(client, api_key, response).json()
    assert refused["state"] == "refused" and refused["rejected"] == 1
    assert "bad UTF-8" in refused["reason"] and "not an OTLP trace export" in refused["reason"]
    refusal = Refusal.objects.get()
    assert refusal.endpoint == "/v1/traces" and refusal.status_code == 200
    assert refusal.reason == refused["reason"] and refusal.shape["export"] == refused["id"]
    assert refusal.api_key == ApiKey.objects.get()
    client.force_login(alice)
    assert "String field had bad UTF-8" in client.get("/p/acme/refusals").content.decode()


def test_a_conversation_refused_once_read_is_counted_and_the_rest_stored(
    client: Any, api_key: str, workers_behind: None
) -> None:
    first = post(client, api_key, body(traces([chat("same")])))
    raw_exports.store_batch()
    assert status_of(client, api_key, first).json()["conversations"] == {"created": 1}
    # The same conversation with another answer, beside a new one: one conflicts, one is stored.
    second = post(client, api_key, body(traces([chat("same", "It has 5 items."), chat("new")])))
    raw_exports.store_batch()
    result = status_of(client, api_key, second).json()
    assert result["state"] == "stored" and result["rejected"] == 1
    assert result["conversations"] == {"conflict": 1, "created": 1}
    assert "already stored with different content" in result["reason"]
    assert Refusal.objects.get().rejected == 1


def test_the_status_of_an_export_is_its_projects_alone(
    client: Any, api_key: str, other_project: Any, vic: Any, olga: Any, workers_behind: None
) -> None:
    response = post(client, api_key, body(traces([chat("t")])))
    _, ingest_only = ApiKey.issue(project=RawExport.objects.get().project, scopes=["ingest"])
    _, check_only = ApiKey.issue(project=RawExport.objects.get().project, scopes=["check"])
    _, other = ApiKey.issue(project=other_project)
    assert status_of(client, ingest_only, response).status_code == 200
    assert status_of(client, check_only, response).status_code == 403
    assert status_of(client, other, response).status_code == 404
    url = f"/api/v1/otlp-exports/{response['Receipts-Export']}"
    client.force_login(vic)
    assert client.get(url).json()["state"] == "waiting"
    client.force_login(olga)
    assert client.get(url).status_code == 404


def test_past_the_backlog_bound_an_export_is_503_with_retry_after(
    client: Any, api_key: str, settings: Any, workers_behind: None
) -> None:
    settings.RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS = 1
    assert post(client, api_key, body(traces([chat("a")]))).status_code == 200

    busy = post(client, api_key, body(traces([chat("b")])))

    assert busy.status_code == 503
    assert busy["Retry-After"] == str(raw_exports.RETRY_AFTER_SECONDS)
    assert "RECEIPTS_OTLP_BACKLOG_MAX_EXPORTS" in busy.json()["errors"][0]["message"]
    assert RawExport.objects.count() == 1 and not Refusal.objects.exists()  # retried, not refused
    raw_exports.store_batch()
    assert post(client, api_key, body(traces([chat("b")]))).status_code == 200


def test_past_the_backlog_bytes_an_export_is_503_but_an_empty_backlog_takes_any(
    client: Any, api_key: str, settings: Any, workers_behind: None
) -> None:
    settings.RECEIPTS_OTLP_BACKLOG_MAX_BYTES = 10  # less than any one export
    assert post(client, api_key, body(traces([chat("a")]))).status_code == 200
    busy = post(client, api_key, body(traces([chat("b")])))
    assert busy.status_code == 503 and busy["Retry-After"]
    assert "RECEIPTS_OTLP_BACKLOG_MAX_BYTES" in busy.json()["errors"][0]["message"]


def test_a_trace_is_checked_once_it_has_settled_each_export_pushing_it_back(
    client: Any, api_key: str, settings: Any, workers_behind: None
) -> None:
    settings.RECEIPTS_OTLP_SETTLE_SECONDS = 60
    post(client, api_key, body(traces([chat("settling", "First.")])))
    raw_exports.store_batch()
    run = CheckRun.objects.get()
    assert run.status == "pending" and run.not_before > timezone.now() + timedelta(seconds=50)
    assert checking.claim_run(run.pk) is None  # not settled: a message arriving now does nothing

    # The trace's next model call, in a later export: the same run, pushed back.
    before = run.not_before
    post(client, api_key, body(traces([chat("settling", "Second.", before=("First.",), at=100)])))
    raw_exports.store_batch()

    assert Conversation.objects.get().turns.count() == 2
    run = CheckRun.objects.get()  # one run, not one per export
    assert run.status == "pending" and run.not_before >= before
    CheckRun.objects.update(not_before=timezone.now() - timedelta(seconds=1))  # the time has passed
    assert [done.status for done in checking.check_runs(run_ids=[run.pk])] == ["done"]


def test_an_export_taken_by_a_worker_that_died_is_taken_again_and_stored_once(
    client: Any, api_key: str, workers_behind: None
) -> None:
    response = post(client, api_key, body(traces([chat("once")])))
    export = RawExport.objects.get(pk=response["Receipts-Export"])

    # A worker takes it and dies in the middle of its batch: what it wrote is rolled back.
    token, taken = raw_exports.take(limit=10)
    assert taken == [export.pk]
    with pytest.raises(RuntimeError), transaction.atomic():
        raw_exports._store_taken(token, taken)
        assert Conversation.objects.count() == 1
        raise RuntimeError("killed")
    assert not Conversation.objects.exists()
    # While its lease holds, nobody takes it, and the sweeper leaves it.
    assert raw_exports.take(limit=10)[1] == []
    assert raw_exports.sweep() == 0
    # Once the lease runs out, the sweeper finds it and the next worker stores it.
    RawExport.objects.update(lease_until=timezone.now() - timedelta(seconds=1))
    assert raw_exports.sweep() == 1
    assert [e.pk for e in raw_exports.store_batch()] == [export.pk]
    # Stored once, and never again however often it is sent to be taken.
    assert raw_exports.store_batch() == [] and raw_exports.store_batch(ids=[export.pk]) == []
    assert Conversation.objects.count() == 1 and Payload.objects.count() == 1
    assert CheckRun.objects.count() == 1
    export.refresh_from_db()
    assert export.state == "stored" and export.attempts == 2 and export.lease_until is None


def test_the_sweeper_sends_exports_whose_message_was_lost(
    client: Any, api_key: str, settings: Any, workers_behind: None
) -> None:
    post(client, api_key, body(traces([chat("lost")])))
    assert raw_exports.sweep() == 0  # just received: its own message is on the way
    RawExport.objects.update(
        created_at=timezone.now() - timedelta(seconds=settings.RECEIPTS_OTLP_LEASE_SECONDS + 1)
    )
    assert raw_exports.sweep() == 1


def test_an_export_started_too_often_is_refused_not_tried_forever(
    client: Any, api_key: str, workers_behind: None
) -> None:
    response = post(client, api_key, body(traces([chat("heavy")])))
    RawExport.objects.update(attempts=raw_exports.MAX_ATTEMPTS)
    raw_exports.store_batch()
    refused = status_of(client, api_key, response).json()
    assert refused["state"] == "refused" and "never finished" in refused["reason"]
    assert not Conversation.objects.exists()


def test_with_eager_tasks_the_answer_says_what_was_refused(client: Any, api_key: str) -> None:
    """Eager mode stores in the request, so the partial success counts the refused spans."""
    post(client, api_key, body(traces([chat("same")])))
    response = post(client, api_key, body(traces([chat("same", "It has 5 items.")])))
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "already stored" in partial["errorMessage"]
    assert status_of(client, api_key, response).json()["state"] == "refused"


def test_exports_whose_worker_died_are_taken_again_alone(
    client: Any, api_key: str, workers_behind: None
) -> None:
    """Any of them may be what killed the worker: alone, it holds up no other."""
    for name in ("a", "b", "c"):
        post(client, api_key, body(traces([chat(name)])))
    _, dead = raw_exports.take(limit=2)  # a worker takes two and dies
    RawExport.objects.update(lease_until=timezone.now() - timedelta(seconds=1))
    first, second, fresh = (raw_exports.take(limit=10)[1] for _ in range(3))
    assert [first, second] == [[dead[0]], [dead[1]]]
    assert len(fresh) == 1 and fresh[0] not in dead


def tool_loop(trace: str, *, named: bool) -> list[dict[str, Any]]:
    """A chat span whose input holds a tool call and its result, and the tool's span: named
    by a conversation id (``named``), or by its trace, which another conversation may continue."""
    call = {"type": "tool_call", "id": "c1", "name": "get_order", "arguments": {"order_id": "A-1001"}}
    result = {"type": "tool_call_response", "id": "c1", "response": ORDER_TEXT}
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": QUESTION}]},
        {"role": "assistant", "parts": [call]},
        {"role": "tool", "parts": [result]},
    ]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": f"{trace}: 5 items, shipped."}]}]
    given = {"gen_ai.conversation.id": f"conversation {trace}"} if named else {}
    chat_span = span(
        trace,
        "chat m",
        20,
        30,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps(output),
            **given,
        },
    )
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_order",
        "gen_ai.tool.call.id": "c1",
    }
    return [chat_span, span(trace, "execute_tool get_order", 10, 15, {**tool, **given})]


def _rows(conversation: Conversation) -> dict[str, Any]:
    """What is stored of a conversation, but its name."""
    document = {key: value for key, value in conversation.document.items() if key != "external_id"}
    turns = list(conversation.turns.values("index", "answer", "answer_seq", "tools_offered"))
    messages = list(
        Message.objects.filter(turn__conversation=conversation)
        .order_by("turn__index", "seq")
        .values("turn__index", "seq", "role", "content", "text", "tool_call_id", "is_error")
    )
    calls = list(
        ToolCall.objects.filter(turn__conversation=conversation)
        .order_by("turn__index", "id")
        .values(
            "call_id", "tool", "arguments", "request_seq", "result", "result_seq", "has_result", "receipt"
        )
    )
    payloads = list(conversation.payloads.values_list("format", flat=True))
    runs = list(conversation.runs.values_list("status", flat=True))
    return {
        "document": document,
        "turns": turns,
        "messages": messages,
        "calls": calls,
        "payloads": payloads,
        "runs": runs,
    }


def test_new_conversations_are_stored_together_as_they_would_be_one_by_one(
    client: Any, api_key: str, workers_behind: None
) -> None:
    """Named by the sender, new conversations go in with one insert per table for them all;
    named by their traces (each might continue a stored one), one by one. Same rows."""
    traces_ = ["t1", "t2", "t3"]
    post(client, api_key, body(traces([s for t in traces_ for s in tool_loop(t, named=True)])))
    with CaptureQueriesContext(connection) as together:
        raw_exports.store_batch()
    # Read before the next request, which empties the connection's log.
    inserts = [
        q["sql"] for q in together.captured_queries if q["sql"].startswith('INSERT INTO "checks_message"')
    ]
    post(client, api_key, body(traces([s for t in traces_ for s in tool_loop(t, named=False)])))
    raw_exports.store_batch()

    assert len(inserts) == 1  # for the three conversations
    for trace in traces_:
        named = Conversation.objects.get(external_id=f"conversation {trace}")
        by_trace = Conversation.objects.get(external_id=trace_id(trace))
        assert _rows(named) == _rows(by_trace)
        assert _rows(named)["calls"][0]["receipt"] is not None  # the tool span's receipt, stored
    assert [e.counts for e in RawExport.objects.order_by("pk")] == [{"created": 3}, {"created": 3}]


def _continue_and_count(client: Any, api_key: str, traces_: list[str]) -> list[str]:
    """Stores one export of the first calls of ``traces_``, then one that continues them
    all; the statements of storing the second."""
    post(client, api_key, body(traces([chat(t, "First answer.") for t in traces_])))
    raw_exports.store_batch()
    again = [chat(t, "Second answer.", before=("First answer.",), at=20) for t in traces_]
    post(client, api_key, body(traces(again)))
    with CaptureQueriesContext(connection) as storing:
        raw_exports.store_batch()
    return [q["sql"] for q in storing.captured_queries]


def test_conversations_an_export_continues_are_stored_together_as_they_would_be_one_by_one(
    client: Any, api_key: str, workers_behind: None
) -> None:
    """A trace arrives in many exports. The conversations one export continues are written
    in the same few statements whatever their number, and hold what each would hold had it
    been continued by an export of its own."""
    two = _continue_and_count(client, api_key, ["a1", "a2"])
    four = _continue_and_count(client, api_key, ["t1", "t2", "t3", "t4"])
    assert len(four) == len(two)
    assert sum(sql.startswith('INSERT INTO "checks_message"') for sql in four) == 1
    for alone in ("u1", "u2"):  # each continued by an export of its own
        _continue_and_count(client, api_key, [alone])
    for together, alone in (("t1", "u1"), ("t4", "u2")):
        continued = Conversation.objects.get(external_id=trace_id(together))
        assert len(continued.document["turns"]) == 2
        assert continued.runs.count() == 1  # the run that waited was pushed back, not joined by a second
        expected = _rows(Conversation.objects.get(external_id=trace_id(alone)))
        expected["document"]["metadata"] = _rows(continued)["document"]["metadata"]  # names its own trace
        assert _rows(continued) == expected
    assert [e.counts for e in RawExport.objects.order_by("pk")][2:4] == [{"created": 4}, {"appended": 4}]
