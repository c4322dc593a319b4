"""The formats agents speak, read into the native shape (CONTRACT.md §1).

The payloads in tests/ingest_payloads/ are demo conversations written the way each API
writes them (Chat Completions, Responses, Anthropic Messages, and the GenAI messages and
tool records an instrumented runtime puts on its spans), plus a trace export recorded from
the OTLP workload generator. The same conversation must give the same findings whichever
format carried it.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from checks.ingest import (
    ADAPTERS,
    AUTO,
    UnknownFormat,
    detect_format,
    otel,
    pieces,
    resolve_format,
    to_native,
)
from checks.suite import run_suite
from checks.suite.conversation import InvalidConversation, canonical, parse, validate

PAYLOADS = Path(__file__).parent / "ingest_payloads"
DEMO = Path(settings.BASE_DIR) / "demo"
DEMOS = {
    "03": "03_saved_for_real",
    "04": "04_failed_write_claimed",
    "05": "05_count_misstatement",
    "06": "06_false_absence_text",
    "09": "09_invented_identifier",
    "10": "10_computed_ratio",
    "13": "13_argument_composed",
}
BASE_NS = 1_796_083_200_000_000_000  # 2026-12-01T00:00:00Z
PROTOBUF, JSON_TYPE = "application/x-protobuf", "application/json"


def payloads(fmt: str) -> dict[str, Any]:
    return json.loads((PAYLOADS / f"{fmt}.json").read_text())


def native_original(key: str) -> dict[str, Any]:
    """The demo as the native format gives it, less what only the native format can carry.

    Receipts and structured claims come from a runtime's own record; the other formats
    carry the transcript only, so the suite derives receipts and reads claims from the text.
    """
    doc = json.loads((DEMO / f"{DEMOS[key]}.json").read_text())
    for turn in doc["turns"]:
        turn.pop("receipts", None)
        turn.pop("claims", None)
    return doc


def judged(conversation: dict[str, Any]) -> dict[str, Any]:
    """What the suite found, without what depends on how a tool result was spelled out."""
    result = run_suite(canonical(conversation))
    return {
        "findings": [
            (
                f["turn"],
                f["checker"],
                f["code"],
                f["severity"],
                f.get("value"),
                (f["claim"] or {}).get("text"),
                (f["claim"] or {}).get("start"),
            )
            for f in result["findings"]
        ],
        "provenance": [(p["turn"], p["value"], p["claim"]["start"]) for p in result["provenance"]],
    }


# --- OTLP encoding, as an exporter writes it ------------------------------------------------


def span(
    trace: str,
    name: str,
    start_ms: int,
    end_ms: int,
    attrs: list[tuple[str, Any]],
    *,
    error: bool = False,
    parent: str = "",
) -> dict[str, Any]:
    return {
        "trace_id": hashlib.sha256(trace.encode()).digest()[:16],
        "span_id": hashlib.sha256(f"{trace}:{name}:{start_ms}".encode()).digest()[:8],
        "parent_id": hashlib.sha256(parent.encode()).digest()[:8] if parent else b"",
        "name": name,
        "kind": 1 if name.startswith("execute_tool") else 3,
        "start": BASE_NS + start_ms * 1_000_000,
        "end": BASE_NS + end_ms * 1_000_000,
        "attrs": attrs,
        "status": 2 if error else 1,
    }


def _json_value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_json_value(x) for x in v]}}
    return {"stringValue": str(v)}


def encode_json(spans: list[dict[str, Any]]) -> bytes:
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "helpdesk"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "agent-runtime", "version": "1.0"},
                        "spans": [
                            {
                                "traceId": s["trace_id"].hex(),
                                "spanId": s["span_id"].hex(),
                                **({"parentSpanId": s["parent_id"].hex()} if s["parent_id"] else {}),
                                "name": s["name"],
                                "kind": s["kind"],
                                "startTimeUnixNano": str(s["start"]),
                                "endTimeUnixNano": str(s["end"]),
                                "attributes": [{"key": k, "value": _json_value(v)} for k, v in s["attrs"]],
                                "status": {"code": s["status"]},
                            }
                            for s in spans
                        ],
                    }
                ],
            }
        ]
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def encode_protobuf(spans: list[dict[str, Any]]) -> bytes:
    def set_value(av: Any, v: Any) -> None:
        if isinstance(v, bool):
            av.bool_value = v
        elif isinstance(v, int):
            av.int_value = v
        elif isinstance(v, float):
            av.double_value = v
        elif isinstance(v, list):
            for x in v:
                set_value(av.array_value.values.add(), x)
        else:
            av.string_value = str(v)

    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "helpdesk"
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "agent-runtime", "1.0"
    for s in spans:
        ps = ss.spans.add()
        ps.trace_id, ps.span_id, ps.name, ps.kind = s["trace_id"], s["span_id"], s["name"], s["kind"]
        if s["parent_id"]:
            ps.parent_span_id = s["parent_id"]
        ps.start_time_unix_nano, ps.end_time_unix_nano = s["start"], s["end"]
        ps.status.code = s["status"]
        for k, v in s["attrs"]:
            kv = ps.attributes.add()
            kv.key = k
            set_value(kv.value, v)
    return request.SerializeToString()


def semconv_spans(record: dict[str, Any], chats: slice = slice(None), tools: slice = slice(None)) -> list:
    """The spans a runtime exports for a conversation: one chat span per model call, one
    execute_tool span per tool run (its status ERROR when the tool failed)."""
    conv = record["conversation_id"]
    out = []
    for i, chat in enumerate(record["chats"][chats], start=chats.start or 0):
        input_json = json.dumps(chat["input"], separators=(",", ":"))
        output_json = json.dumps(chat["output"], separators=(",", ":"))
        out.append(
            span(
                f"{conv}-trace",
                f"chat {record['model']}",
                1000 * i,
                1000 * i + 400,
                [
                    ("gen_ai.operation.name", "chat"),
                    ("gen_ai.provider.name", "openai"),
                    ("gen_ai.request.model", record["model"].rsplit("-2025", 1)[0]),
                    ("gen_ai.response.model", record["model"]),
                    ("gen_ai.conversation.id", conv),
                    ("gen_ai.response.finish_reasons", [chat["output"][0]["finish_reason"]]),
                    ("gen_ai.usage.input_tokens", len(input_json) // 4),
                    ("gen_ai.tool.definitions", json.dumps(record["tool_definitions"])),
                    ("gen_ai.input.messages", input_json),
                    ("gen_ai.output.messages", output_json),
                ],
            )
        )
    for k, tool in enumerate(record["tools"][tools], start=tools.start or 0):
        out.append(
            span(
                f"{conv}-trace",
                f"execute_tool {tool['name']}",
                1000 * k + 500,
                1000 * k + 700,
                [
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.tool.name", tool["name"]),
                    ("gen_ai.tool.type", "function"),
                    ("gen_ai.tool.call.id", tool["call_id"]),
                    ("gen_ai.tool.call.arguments", tool["arguments"]),
                    ("gen_ai.tool.call.result", tool["result"]),
                ],
                error=tool["error"],
            )
        )
    return out


OTLP_ENCODINGS = {
    "otlp-protobuf": (encode_protobuf, PROTOBUF, False),
    "otlp-protobuf-gzip": (encode_protobuf, PROTOBUF, True),
    "otlp-json": (encode_json, JSON_TYPE, False),
    "otlp-json-gzip": (encode_json, JSON_TYPE, True),
}


def export(spans: list, encoding: str = "otlp-protobuf") -> dict[str, Any]:
    """Spans through the wire: encoded as an exporter sends them, then decoded."""
    encode, content_type, gzipped = OTLP_ENCODINGS[encoding]
    body = encode(spans)
    if gzipped:
        body = gzip.compress(body)
    return otel.decode_request(body, content_type, "gzip" if gzipped else "")


def adapted(fmt: str, key: str) -> dict[str, Any]:
    if fmt in OTLP_ENCODINGS:
        (conversation,) = otel.conversations_from_spans(export(semconv_spans(payloads("semconv")[key]), fmt))
        return conversation
    return to_native(payloads(fmt)[key], fmt)


# --- one conversation, every format, the same findings --------------------------------------


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic", *OTLP_ENCODINGS])
@pytest.mark.parametrize("key", sorted(DEMOS))
def test_the_same_conversation_gives_the_same_findings_in_every_format(fmt: str, key: str) -> None:
    original = native_original(key)
    conversation = adapted(fmt, key)
    assert judged(conversation) == judged(original)
    # The transcript reads the same: same roles, same text, same tools called.
    ours, theirs = parse(conversation), parse(original)
    assert [[(m.role, m.text) for m in t.messages if m.role != "tool"] for t in ours.turns] == [
        [(m.role, m.text) for m in t.messages if m.role != "tool"] for t in theirs.turns
    ]
    assert [[r.tool for r in t.receipts] for t in ours.turns] == [
        [r.tool for r in t.receipts] for t in theirs.turns
    ]
    assert [[json.loads(m.text) for m in t.messages if m.role == "tool"] for t in ours.turns] == [
        [json.loads(m.text) for m in t.messages if m.role == "tool"] for t in theirs.turns
    ]


def test_the_parity_cases_do_find_something() -> None:
    found = {key: judged(native_original(key))["findings"] for key in DEMOS}
    assert {code for findings in found.values() for (_, _, code, *_rest) in findings} >= {
        "failed_action_claimed",
        "count_misstatement",
        "false_absence",
        "unsupported_value",
        "unsupported_argument",
    }


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic"])
@pytest.mark.parametrize("key", sorted(DEMOS))
def test_each_payload_is_detected_as_its_format(fmt: str, key: str) -> None:
    payload = payloads(fmt)[key]
    assert detect_format(payload) == fmt
    assert to_native(payload) == to_native(payload, fmt) == to_native(payload, "auto")


def test_the_failed_write_reads_as_failed_in_every_format() -> None:
    for fmt in ["openai", "responses", "anthropic", *OTLP_ENCODINGS]:
        (turn,) = parse(adapted(fmt, "04")).turns
        (receipt,) = turn.receipts
        assert (receipt.tool, receipt.ok, receipt.outcome) == ("memory_remember", False, "error"), fmt


# --- OpenAI Chat Completions ----------------------------------------------------------------


def chat_transcript(**extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-4.1-mini",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup_order",
                    "description": "Find an order by its number.",
                    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                },
            }
        ],
        "messages": [
            {"role": "developer", "content": "Answer from the order system only."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Where is order"}, {"type": "text", "text": "A-1182?"}],
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_9QvX2",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1182"'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_9QvX2", "content": '{"error": "invalid JSON arguments"}'},
            {"role": "assistant", "content": "I could not look up order A-1182."},
        ],
        **extra,
    }


def test_openai_keeps_invalid_arguments_raw_and_offers_the_tools_in_each_turn() -> None:
    doc = canonical(to_native(chat_transcript(external_id="order-a1182"), "openai"))
    (turn,) = doc["turns"]
    assert turn["tools_offered"] == [
        {
            "name": "lookup_order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }
    ]
    call = turn["messages"][2]["tool_calls"][0]
    assert call == {
        "id": "call_9QvX2",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1182"'},
    }
    assert turn["messages"][0] == {"role": "system", "content": "Answer from the order system only."}
    assert turn["messages"][1]["content"] == [
        {"type": "text", "text": "Where is order"},
        {"type": "text", "text": "A-1182?"},
    ]
    assert doc["agent"] == {"name": "", "model": "gpt-4.1-mini"}
    run_suite(doc)  # the suite reads it, invalid arguments and all


def test_openai_takes_the_senders_id_in_order_and_lets_validation_name_a_missing_one() -> None:
    assert (
        to_native(chat_transcript(external_id="a", id="b", metadata={"external_id": "c"}), "openai")[
            "external_id"
        ]
        == "a"
    )
    assert to_native(chat_transcript(id="b", metadata={"external_id": "c"}), "openai")["external_id"] == "b"
    assert to_native(chat_transcript(metadata={"external_id": "c"}), "openai")["external_id"] == "c"
    errors = validate(to_native(chat_transcript(), "openai"))
    assert [e["path"] for e in errors] == ["$.external_id"]


def test_openai_closes_the_transcript_with_the_responses_first_choice() -> None:
    payload = chat_transcript(external_id="order-a1182")
    reply = payload["messages"].pop()
    payload["choices"] = [{"index": 0, "message": {**reply, "refusal": None}, "finish_reason": "stop"}]
    assert canonical(to_native(payload, "openai")) == canonical(
        to_native(chat_transcript(external_id="order-a1182"), "openai")
    )


def test_openai_without_tools_leaves_what_was_offered_unknown() -> None:
    payload = chat_transcript(external_id="x")
    del payload["tools"]
    doc = canonical(to_native(payload, "openai"))
    assert "tools_offered" not in doc["turns"][0]


def _variant(*messages: dict[str, Any]) -> dict[str, Any]:
    """A transcript of one question about stock in two bins, logged by a runtime of its own."""
    return {
        "external_id": "bins-1",
        "messages": [{"role": "user", "content": "How many are in bins A1 and B2?"}, *messages],
    }


BIN_RESULTS = ({"bin": "A1", "qty": 4}, {"bin": "B2", "qty": 7})
ANSWER = {"role": "assistant", "content": "A1 holds 4 and B2 holds 7."}


def _calls(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(tool name, arguments, the result that answers it) for each call of a native document."""
    messages = [m for turn in doc["turns"] for m in turn["messages"]]
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [
        (c["function"]["name"], c["function"]["arguments"], results[c["id"]])
        for m in messages
        for c in m.get("tool_calls") or []
    ]


EXPECTED_CALLS = [
    ("count_bin", '{"bin":"A1"}', '{"bin":"A1","qty":4}'),
    ("count_bin", '{"bin":"B2"}', '{"bin":"B2","qty":7}'),
]


def test_flat_calls_and_results_logged_as_objects_read_as_the_calls_and_results_they_are() -> None:
    payload = _variant(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "k1", "name": "count_bin", "arguments": {"bin": "A1"}},
                {"id": "k2", "name": "count_bin", "arguments": '{"bin":"B2"}'},
            ],
        },
        {"role": "tool", "tool_call_id": "k1", "content": BIN_RESULTS[0]},
        {"role": "tool", "tool_call_id": "k2", "content": BIN_RESULTS[1]},
        ANSWER,
    )
    assert detect_format(payload) == "openai"
    doc = canonical(to_native(payload, AUTO))
    assert _calls(doc) == EXPECTED_CALLS
    assert doc["metadata"] == {}  # every pairing was by the ids as written
    assert [f for f in run_suite(doc)["findings"] if f["severity"] == "flag"] == []


def test_a_number_a_tool_returned_is_stored_as_its_text() -> None:
    payload = _variant(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "n1", "name": "count_seats", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "n1", "content": 42},
        {"role": "assistant", "content": "There are 42 seats left."},
    )
    doc = canonical(to_native(payload, AUTO))
    assert doc["turns"][0]["messages"][2]["content"] == "42"
    assert [f for f in run_suite(doc)["findings"] if f["severity"] == "flag"] == []


def _legacy_step(bin_name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """One call of the legacy functions API and its result, which carries no call id."""
    arguments = json.dumps({"bin": bin_name}, separators=(",", ":"))
    call = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "count_bin", "arguments": arguments},
    }
    answer = {"role": "function", "name": "count_bin", "content": json.dumps(result, separators=(",", ":"))}
    return [call, answer]


def test_legacy_function_calls_and_lost_result_ids_are_paired_by_name_and_order_and_say_so() -> None:
    legacy = _variant(*_legacy_step("A1", BIN_RESULTS[0]), *_legacy_step("B2", BIN_RESULTS[1]), ANSWER)
    lost_ids = _variant(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "k1",
                    "type": "function",
                    "function": {"name": "count_bin", "arguments": '{"bin":"A1"}'},
                },
                {
                    "id": "k2",
                    "type": "function",
                    "function": {"name": "count_bin", "arguments": '{"bin":"B2"}'},
                },
            ],
        },
        {"role": "tool", "content": BIN_RESULTS[0]},  # the logger kept no id
        {"role": "tool", "tool_call_id": "lost-7", "content": BIN_RESULTS[1]},  # nor the right one
        ANSWER,
    )
    for payload in (legacy, lost_ids):
        assert detect_format(payload) == "openai"
        doc = canonical(to_native(payload, AUTO))
        assert _calls(doc) == EXPECTED_CALLS
        assert doc["metadata"] == {"pairing": "by name and order"}  # an inference, not a record


@pytest.mark.parametrize("calls", ["lookup", [1], [["k1"]]])
def test_calls_that_are_no_list_of_objects_are_left_for_validation_to_name(calls: Any) -> None:
    """The pairing reads only calls it can read: anything else is refused naming its path, not a crash."""
    payload = _variant(
        {"role": "assistant", "content": None, "tool_calls": calls}, {"role": "tool", "content": "4"}
    )
    for fmt in ("openai", AUTO):
        paths = [e["path"] for e in validate(to_native(payload, fmt))]
        assert any(path.startswith("$.messages[1].tool_calls") for path in paths), paths


def test_read_as_native_the_same_variants_are_refused_naming_the_part() -> None:
    payload = _variant(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "k1", "name": "count_bin", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "k1", "content": BIN_RESULTS[0]},
        ANSWER,
    )
    paths = [e["path"] for e in validate(to_native(payload, "native"))]
    assert "$.messages[1].tool_calls[0].function" in paths


# --- OpenAI Responses -----------------------------------------------------------------------


def test_responses_groups_consecutive_calls_and_reads_instructions_as_the_system_prompt() -> None:
    payload = {
        "external_id": "weather-2",
        "model": "gpt-4.1",
        "instructions": "You are a travel assistant.",
        "tools": [
            {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
            {"type": "web_search_preview"},
        ],
        "input": "What is the weather in Oslo and Bergen?",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Let me check both.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_oslo", "name": "get_weather",
             "arguments": '{"city":"Oslo"}', "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_bergen", "name": "get_weather",
             "arguments": '{"city":"Bergen"}', "status": "completed"},
            {"type": "function_call_output", "call_id": "call_oslo", "output": '{"temp_c": -3}'},
            {"type": "function_call_output", "call_id": "call_bergen",
             "output": [{"type": "input_text", "text": '{"temp_c": 4}'}]},
            {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Oslo is at -3 °C, Bergen at 4 °C.",
                          "annotations": []}]},
        ],
    }  # fmt: skip
    assert detect_format(payload) == "responses"
    doc = canonical(to_native(payload))
    assert doc["system"] == "You are a travel assistant."
    assert doc["agent"]["model"] == "gpt-4.1"
    (turn,) = doc["turns"]
    assert turn["tools_offered"] == [
        {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
        {"name": "web_search_preview"},
    ]
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant", "tool", "tool", "assistant"]
    assert turn["messages"][1]["content"] == "Let me check both."
    assert [c["id"] for c in turn["messages"][1]["tool_calls"]] == ["call_oslo", "call_bergen"]
    assert [c["function"]["arguments"] for c in turn["messages"][1]["tool_calls"]] == [
        '{"city":"Oslo"}',
        '{"city":"Bergen"}',
    ]
    assert [m["content"] for m in turn["messages"][2:4]] == ['{"temp_c": -3}', '{"temp_c": 4}']


# --- Anthropic Messages ---------------------------------------------------------------------


def anthropic_transcript() -> dict[str, Any]:
    return {
        "external_id": "deploy-77",
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You run deployments."}, {"type": "text", "text": "Be brief."}],
        "tools": [
            {"name": "deploy", "input_schema": {"type": "object", "properties": {"env": {"type": "string"}}}}
        ],
        "messages": [
            {"role": "user", "content": "Deploy to staging."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "The user wants staging.", "signature": "sig"},
                    {"type": "text", "text": "Deploying now."},
                    {"type": "tool_use", "id": "toolu_01Dep", "name": "deploy",
                     "input": {"env": "staging", "force": False, "notes": "ünïcode"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01Dep", "is_error": True,
                     "content": "deploy failed: quota exceeded"},
                    {"type": "text", "text": "Did it work?"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Yes, staging is deployed."}]},
        ],
    }  # fmt: skip


def test_anthropic_tool_results_come_first_and_an_error_result_is_a_failed_receipt() -> None:
    payload = anthropic_transcript()
    assert detect_format(payload) == "anthropic"
    doc = canonical(to_native(payload))
    assert doc["system"] == "You run deployments.\nBe brief."
    assert doc["agent"]["model"] == "claude-sonnet-4-5"
    first, second = doc["turns"]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "tool"]
    assert first["messages"][1]["content"] == "Deploying now."
    assert first["messages"][1]["tool_calls"][0]["function"]["arguments"] == (
        '{"env":"staging","force":false,"notes":"ünïcode"}'
    )
    assert first["messages"][2] == {
        "role": "tool",
        "content": "deploy failed: quota exceeded",
        "tool_call_id": "toolu_01Dep",
        "is_error": True,
    }
    assert [m["role"] for m in second["messages"]] == ["user", "assistant"]
    assert second["messages"][0]["content"] == "Did it work?"
    (receipt,) = parse(doc).turns[0].receipts
    assert (receipt.derived, receipt.ok, receipt.outcome) == (True, False, "error")
    assert (
        first["tools_offered"]
        == second["tools_offered"]
        == [{"name": "deploy", "parameters": {"type": "object", "properties": {"env": {"type": "string"}}}}]
    )


def test_anthropic_drops_a_user_message_that_only_carried_tool_results() -> None:
    payload = anthropic_transcript()
    payload["messages"][2]["content"].pop()  # no text next to the result
    doc = canonical(to_native(payload, "anthropic"))
    (turn,) = doc["turns"]
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant", "tool", "assistant"]


# --- format detection -----------------------------------------------------------------------


def test_detection_prefers_native_whenever_the_native_reading_serves() -> None:
    flat = {
        "external_id": "x",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
    assert detect_format(flat) == "native"
    assert detect_format({**flat, "system": "Be kind."}) == "native"
    assert detect_format(json.loads((DEMO / "01_sencha.json").read_text())) == "native"
    assert detect_format([1, 2]) == "native"
    assert detect_format({"external_id": "x"}) == "native"
    assert detect_format({"messages": flat["messages"], "id": "chatcmpl-1"}) == "openai"
    assert (
        detect_format({**flat, "messages": [{"role": "developer", "content": "x"}, *flat["messages"]]})
        == "openai"
    )
    assert detect_format({**flat, "tools": [{"name": "t", "input_schema": {}}]}) == "anthropic"
    assert detect_format({**flat, "system": [{"type": "text", "text": "x"}]}) == "anthropic"
    assert detect_format({"external_id": "x", "input": "hi"}) == "responses"
    assert (
        detect_format({"external_id": "x", "output": [{"type": "message", "role": "assistant"}]})
        == "responses"
    )


def test_format_names_resolve_and_an_unknown_one_names_the_accepted() -> None:
    assert set(ADAPTERS) == {
        "native",
        "openai",
        "responses",
        "anthropic",
        "langchain",
        "pydantic-ai",
        "bedrock",
    }
    assert resolve_format({"turns": []}, None) == resolve_format({"turns": []}, "auto") == "native"
    assert resolve_format(payloads("openai")["03"], "anthropic") == "anthropic"
    with pytest.raises(UnknownFormat) as caught:
        to_native({}, "fax")
    assert "native" in str(caught.value) and "anthropic" in str(caught.value)


def test_services_read_every_format_into_one_document() -> None:
    from checks.ingestion import to_document

    documents = {
        fmt: to_document(payloads(fmt)["06"], format=fmt) for fmt in ("openai", "responses", "anthropic")
    }
    texts = {
        fmt: [m["content"] for m in doc["turns"][0]["messages"] if m["role"] != "tool"]
        for fmt, doc in documents.items()
    }
    assert texts["openai"] == texts["responses"] == texts["anthropic"]


# --- OTLP traces ----------------------------------------------------------------------------


def test_otlp_spans_become_a_conversation_with_receipts_from_execute_tool_spans() -> None:
    record = payloads("semconv")["04"]
    (conversation,) = otel.conversations_from_spans(export(semconv_spans(record)))
    assert conversation["external_id"] == "ex-failed-write"
    assert conversation["agent"] == {"name": "helpdesk", "model": "gpt-4.1-2025-04-14"}
    assert conversation["started_at"] == "2026-12-01T00:00:00Z"
    (turn,) = conversation["turns"]
    (call,) = turn["messages"][1]["tool_calls"]
    assert call["function"] == {"name": "memory_remember", "arguments": '{"text":"favourite tea: sencha"}'}
    assert turn["messages"][2]["content"] == '{"error":"permission denied"}'
    assert turn["receipts"] == [
        {
            "call_id": call["id"],
            "tool": "memory_remember",
            "ok": False,
            "outcome": "error",
            "at": "2026-12-01T00:00:00.500000Z",
        }
    ]
    assert turn["tools_offered"][0]["name"] == "memory_remember"


def test_a_tool_call_response_may_say_response_or_result() -> None:
    record = copy.deepcopy(payloads("semconv")["06"])
    for chat in record["chats"]:
        for message in chat["input"]:
            for part in message["parts"]:
                if part["type"] == "tool_call_response":
                    part["result"] = part.pop("response")
    by_result = otel.conversations_from_spans(export(semconv_spans(record)))
    by_response = otel.conversations_from_spans(export(semconv_spans(payloads("semconv")["06"])))
    assert by_result == by_response
    assert by_result[0]["turns"][0]["messages"][2]["content"].startswith('[{"user":"mkeller"')


def test_a_call_answered_only_by_its_span_gets_the_tool_message_from_the_span() -> None:
    record = payloads("semconv")["06"]
    # Only the first model call (which asked for the tool) and the tool run are exported.
    (conversation,) = otel.conversations_from_spans(export(semconv_spans(record, chats=slice(0, 1))))
    (turn,) = conversation["turns"]
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant", "tool"]
    assert turn["messages"][2] == {
        "role": "tool",
        "tool_call_id": record["tools"][0]["call_id"],
        "content": record["tools"][0]["result"],
    }
    failed = payloads("semconv")["04"]
    (conversation,) = otel.conversations_from_spans(export(semconv_spans(failed, chats=slice(0, 1))))
    tool_message = conversation["turns"][0]["messages"][2]
    assert tool_message["is_error"] is True
    assert parse(conversation).turns[0].receipts[0].ok is False


def test_spans_without_a_conversation_id_are_one_conversation_per_trace() -> None:
    spans = semconv_spans(payloads("semconv")["03"])
    for s in spans:
        s["attrs"] = [(k, v) for k, v in s["attrs"] if k != "gen_ai.conversation.id"]
    request = export(spans, "otlp-json")
    (conversation,) = otel.conversations_from_spans(request)
    trace_hex = spans[0]["trace_id"].hex()
    assert conversation["external_id"] == trace_hex == otel.external_ids(request)[0]
    assert conversation["turns"][0]["receipts"][0]["ok"] is True
    # A tool span with no conversation id still joins the conversation its trace names.
    spans[0]["attrs"].append(("gen_ai.conversation.id", "conv-03"))
    (conversation,) = otel.conversations_from_spans(export(spans, "otlp-json"))
    assert conversation["external_id"] == "conv-03"
    assert len(conversation["turns"][0]["receipts"]) == 1


def test_a_later_export_extends_the_conversation_an_earlier_one_stored() -> None:
    record = payloads("semconv")["13"]  # two turns: two model calls and one tool run each
    first = canonical(
        otel.conversations_from_spans(export(semconv_spans(record, slice(0, 2), slice(0, 1))))[0]
    )
    # The exporter may resend everything so far...
    whole = canonical(otel.conversations_from_spans(export(semconv_spans(record), "otlp-json-gzip"))[0])
    assert len(first["turns"]) == 1 and len(whole["turns"]) == 2
    assert whole["turns"][: len(first["turns"])] == first["turns"]
    assert {k: v for k, v in whole.items() if k != "turns"} == {
        k: v for k, v in first.items() if k != "turns"
    }
    # ...or only the spans it had not sent: the chat call's input still carries the history.
    later = canonical(
        otel.conversations_from_spans(export(semconv_spans(record, slice(2, 4), slice(1, 2))))[0]
    )
    assert [t["messages"] for t in later["turns"][:1]] == [t["messages"] for t in first["turns"]]
    merged = canonical(pieces.merge_with_stored(first, later))
    assert merged["turns"][:1] == first["turns"]
    assert merged == whole
    assert pieces.merge_with_stored(whole, first) == whole  # an earlier export arriving late adds nothing
    other = copy.deepcopy(later)
    other["turns"][0]["messages"][0]["content"] = "Something else entirely."
    assert pieces.merge_with_stored(first, other) is other  # not an extension: left to the resending rule


def test_the_workload_generators_export_reads_the_same_as_protobuf_and_as_json() -> None:
    from_protobuf = otel.decode_request((PAYLOADS / "peer_ingest.otlp.pb.gz").read_bytes(), PROTOBUF, "gzip")
    from_json = otel.decode_request((PAYLOADS / "peer_ingest.otlp.json").read_bytes(), JSON_TYPE, "")
    reading = otel.read(from_protobuf)
    assert reading.spans == 4 and reading.skipped == []
    assert reading.conversations == otel.conversations_from_spans(from_json)
    assert [c["external_id"] for c in reading.conversations] == ["conv-7-000000", "conv-7-000001"]
    for conversation in reading.conversations:
        doc = canonical(conversation)
        assert doc["agent"]["name"] == "peer-ingest-agent" and doc["agent"]["model"]
        (turn,) = doc["turns"]
        assert [m["role"] for m in turn["messages"]][0] == "user"
        assert turn["messages"][-1]["role"] == "assistant" and turn["messages"][-1]["content"]
        calls = [c["id"] for m in turn["messages"] for c in m.get("tool_calls", ())]
        assert [r["call_id"] for r in turn["receipts"]] == calls
        assert all(r["ok"] for r in turn["receipts"])
        (receipt,) = parse(doc).turns[0].receipts
        assert receipt.result_count is None  # rows sit beside row_count and columns: not one array
        run_suite(doc)


def test_a_request_with_no_chat_span_yet_is_reported_not_invented() -> None:
    spans = semconv_spans(payloads("semconv")["06"], chats=slice(0, 0))  # the tool run only
    reading = otel.read(export(spans))
    assert reading.conversations == []
    assert reading.skipped[0]["external_id"] == spans[0]["trace_id"].hex()  # no span names it
    assert "gen_ai.input.messages" in reading.skipped[0]["reason"]


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "message"),
    [
        (b"\x0a\xff\xff\xff\xff\x0f", PROTOBUF, "", "not an OTLP ExportTraceServiceRequest in protobuf"),
        (b"not gzip at all", PROTOBUF, "gzip", "not valid gzip"),
        (gzip.compress(b'{"resourceSpans": []}', mtime=0)[:-12], JSON_TYPE, "gzip", "not valid gzip"),
        (b'{"resourceSpans": [', JSON_TYPE, "", "not valid JSON"),
        (b"\xff\xfe{}", JSON_TYPE, "", "not UTF-8 JSON"),
        (b"[1, 2]", JSON_TYPE, "", "must be a JSON object"),
        (b'{"resourceSpans": {"scopeSpans": []}}', JSON_TYPE, "", "$.resourceSpans must be a list"),
        (b"{}", "text/plain", "", "send application/x-protobuf or application/json"),
        (b"{}", JSON_TYPE, "br", "Content-Encoding 'br' is not supported"),
    ],
)
def test_an_undecodable_body_is_refused_with_a_clear_message(
    body: bytes, content_type: str, encoding: str, message: str
) -> None:
    with pytest.raises(otel.BadOtlp) as caught:
        otel.decode_request(body, content_type, encoding)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_decompressed_body_over_the_limit_is_refused() -> None:
    body = gzip.compress(encode_json(semconv_spans(payloads("semconv")["03"])))
    with pytest.raises(otel.BadOtlp, match="over the limit of 1000 bytes"):
        otel.decode_request(body, JSON_TYPE + "; charset=utf-8", "GZIP", max_bytes=1000)
    assert otel.decode_request(body, JSON_TYPE, "gzip", max_bytes=10**6)["resourceSpans"]


def test_an_otlp_conversation_that_is_not_valid_is_left_for_validation_to_name() -> None:
    record = copy.deepcopy(payloads("semconv")["03"])
    record["chats"][-1]["input"][1]["parts"][0]["name"] = ""
    (conversation,) = otel.conversations_from_spans(export(semconv_spans(record)))
    with pytest.raises(InvalidConversation) as caught:
        canonical(conversation)
    assert caught.value.errors[0]["path"].endswith(".function.name")


def test_otlp_pairs_each_call_of_a_reused_id_with_its_own_span() -> None:
    """call_X read, was answered, then call_X changed (CONTRACT.md §6): the k-th call of an id
    takes the k-th execute_tool span of that id, so the change gets its own result (from its
    span) and its own receipt, not the read's."""

    def call_part(name: str) -> dict[str, Any]:
        return {"type": "tool_call", "id": "call_X", "name": name, "arguments": {"reservation_id": "ZFA04Y"}}

    history = [
        {"role": "user", "parts": [{"type": "text", "content": "Move ZFA04Y to HAT170."}]},
        {"role": "assistant", "parts": [call_part("get_reservation_details")]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_X", "response": {"flights": []}}],
        },
        {"role": "assistant", "parts": [call_part("update_reservation_flights")]},
    ]
    answer = [
        {"role": "assistant", "parts": [{"type": "text", "content": "Moved."}], "finish_reason": "stop"}
    ]
    chat = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.conversation.id", "reused"),
        ("gen_ai.input.messages", json.dumps(history)),
        ("gen_ai.output.messages", json.dumps(answer)),
    ]

    def run(start_ms: int, tool: str, result: str, *, error: bool = False) -> dict[str, Any]:
        attrs = [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", tool),
            ("gen_ai.tool.call.id", "call_X"),
            ("gen_ai.tool.call.result", result),
        ]
        return span("reused-trace", f"execute_tool {tool}", start_ms, start_ms + 100, attrs, error=error)

    spans = [
        span("reused-trace", "chat", 2000, 2400, chat),
        run(1500, "update_reservation_flights", '{"error":"payment declined"}', error=True),
        run(500, "get_reservation_details", '{"flights":[]}'),
    ]
    (conversation,) = otel.conversations_from_spans(export(spans))
    (turn,) = conversation["turns"]
    assert [(m["role"], m.get("tool_call_id")) for m in turn["messages"]] == [
        ("user", None),
        ("assistant", None),
        ("tool", "call_X"),
        ("assistant", None),
        ("tool", "call_X"),
        ("assistant", None),
    ]
    assert turn["messages"][4]["content"] == '{"error":"payment declined"}'
    assert [(r["tool"], r["ok"]) for r in turn["receipts"]] == [
        ("get_reservation_details", True),
        ("update_reservation_flights", False),
    ]
    assert [r.tool for r in parse(conversation).turns[0].receipts] == [
        "get_reservation_details",
        "update_reservation_flights",
    ]
