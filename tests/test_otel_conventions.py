"""Spans written in the conventions real instrumentations use, read as the conversation the
native format would give: OpenInference, OpenLLMetry's legacy attributes, GenAI span events
(Strands), and what lossy producers write (ids that do not pair, no call id on a tool span,
tool calls as a Python repr). Each is one whole conversation with its tool call, its result
and its final answer, and the answer's wrong figure is flagged by the suite.

The captures in tests/otel_captures/ are byte-exact exports of real libraries: each is
replayed through the endpoints and must be stored as one conversation, answer and all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from checks.ingest import otel
from checks.ingest.call_pairing import BY_NAME_AND_ORDER
from checks.models import Conversation, Finding
from checks.suite import run_suite
from checks.suite.conversation import canonical
from tests.otlp_json import (
    GET_ORDER_SCHEMA,
    ORDER_TEXT,
    QUESTION,
    SYSTEM,
    WRONG_ANSWER,
    body,
    protobuf,
    span,
    trace_id,
    traces,
)

CAPTURES = Path(__file__).parent / "otel_captures"
MODEL = "scripted-order-model"
ARGUMENTS = '{"order_id": "A-1001"}'


def read_one(export: dict[str, Any]) -> dict[str, Any]:
    reading = otel.read(export)
    assert reading.skipped == []
    (conversation,) = reading.conversations
    return canonical(conversation)


def flagged(conversation: dict[str, Any]) -> set[str]:
    return {f["code"] for f in run_suite(conversation)["findings"] if f["severity"] == "flag"}


def assert_order_desk_loop(conversation: dict[str, Any], call_id: str = "call_1") -> None:
    """The two-step loop, whole: question, the get_order call, its result, the answer."""
    (turn,) = conversation["turns"]
    messages = turn["messages"]
    user = next(m for m in messages if m["role"] == "user")
    assert user["content"] == QUESTION
    (call,) = [c for m in messages for c in m.get("tool_calls") or ()]
    assert call["id"] == call_id and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-1001"}
    (result,) = [m for m in messages if m["role"] == "tool"]
    assert result["tool_call_id"] == call_id and json.loads(result["content"])["item_count"] == 2
    assert messages[-1] == {"role": "assistant", "content": WRONG_ANSWER}


# --- OpenInference -------------------------------------------------------------------------


def openinference_spans(trace: str = "oi") -> list[dict[str, Any]]:
    """What openinference-instrumentation-openai writes for the loop, under an AGENT span."""
    history = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": SYSTEM,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": QUESTION,
    }
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": MODEL,
        "llm.system": "openai",
        "llm.tools.0.tool.json_schema": json.dumps(
            {"type": "function", "function": {"name": "get_order", "parameters": GET_ORDER_SCHEMA}}
        ),
        "input.mime_type": "application/json",
    }
    call = {
        "message.role": "assistant",
        "message.tool_calls.0.tool_call.id": "call_1",
        "message.tool_calls.0.tool_call.function.name": "get_order",
        "message.tool_calls.0.tool_call.function.arguments": ARGUMENTS,
    }
    first = {**llm, **history, **{f"llm.output_messages.0.{k}": v for k, v in call.items()}}
    second = {
        **llm,
        **history,
        **{f"llm.input_messages.2.{k}": v for k, v in call.items()},
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.tool_call_id": "call_1",
        "llm.input_messages.3.message.content": ORDER_TEXT,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": WRONG_ANSWER,
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_order",
        "input.value": ARGUMENTS,
        "output.value": ORDER_TEXT,
    }
    agent = {"openinference.span.kind": "AGENT", "agent.name": "order-desk", "graph.node.id": "order-desk"}
    root = f"{trace}:order-desk:0"
    return [
        span(trace, "ChatCompletion", 10, 200, first, parent=root),
        span(trace, "get_order", 210, 260, tool, parent=root),
        span(trace, "ChatCompletion", 270, 400, second, parent=root),
        span(trace, "order-desk", 0, 410, agent),
    ]


def test_openinference_spans_read_as_one_checked_conversation() -> None:
    conversation = read_one(traces(openinference_spans()))
    assert conversation["external_id"] == trace_id("oi")
    assert conversation["agent"] == {"name": "order-desk", "model": MODEL}
    assert_order_desk_loop(conversation)
    (turn,) = conversation["turns"]
    assert turn["tools_offered"] == [{"name": "get_order", "parameters": GET_ORDER_SCHEMA}]
    # The TOOL span records no call id: its receipt is paired by tool name, and says so.
    assert [(r["call_id"], r["tool"], r["ok"]) for r in turn["receipts"]] == [("call_1", "get_order", True)]
    assert conversation["metadata"] == {"pairing": BY_NAME_AND_ORDER}
    assert "count_misstatement" in flagged(conversation)


def test_an_openinference_protobuf_export_is_stored_and_its_wrong_answer_flagged(
    client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/v1/traces",
            data=protobuf(traces(openinference_spans())),
            content_type="application/x-protobuf",
            headers={"Authorization": f"Bearer {api_key}"},
        )
    assert response.status_code == 200
    assert ExportTraceServiceResponse.FromString(response.content).partial_success.rejected_spans == 0
    stored = Conversation.objects.get()
    assert stored.document["turns"][0]["messages"][-1]["content"] == WRONG_ANSWER
    assert "count_misstatement" in set(Finding.objects.flags().values_list("code", flat=True))


def test_openinference_langchain_roles_and_tool_messages_are_read() -> None:
    """openinference-instrumentation-langchain passes LangChain's roles on, and its TOOL span's
    output is the ToolMessage, which names the call it answers."""
    spans = openinference_spans("lc")
    second = spans[2]["attributes"]
    for kv in second:
        if kv["key"].endswith("message.role") and kv["value"]["stringValue"] in ("user", "assistant"):
            kv["value"]["stringValue"] = {"user": "human", "assistant": "ai"}[kv["value"]["stringValue"]]
    tool_message = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": {"content": ORDER_TEXT, "tool_call_id": "call_1", "name": "get_order", "type": "tool"},
    }
    for kv in spans[1]["attributes"]:
        if kv["key"] == "output.value":
            kv["value"]["stringValue"] = json.dumps(tool_message)
    conversation = read_one(traces(spans))
    assert_order_desk_loop(conversation)
    (receipt,) = conversation["turns"][0]["receipts"]
    assert receipt["call_id"] == "call_1"
    assert conversation["metadata"] == {}  # the ToolMessage named its call: paired by id
    assert "count_misstatement" in flagged(conversation)


# --- OpenLLMetry's legacy attributes -------------------------------------------------------


def legacy_spans(trace: str = "legacy") -> list[dict[str, Any]]:
    """What OpenLLMetry's OpenAI instrumentation wrote before the conventions moved."""
    common = {
        "llm.request.type": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": MODEL,
        "gen_ai.response.model": MODEL,
        "llm.request.functions.0.name": "get_order",
        "llm.request.functions.0.parameters": json.dumps(GET_ORDER_SCHEMA),
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": QUESTION,
    }
    call = {
        "tool_calls.0.id": "call_1",
        "tool_calls.0.name": "get_order",
        "tool_calls.0.arguments": ARGUMENTS,
    }
    first = {
        **common,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.finish_reason": "tool_calls",
        **{f"gen_ai.completion.0.{k}": v for k, v in call.items()},
    }
    second = {
        **common,
        "gen_ai.prompt.2.role": "assistant",
        **{f"gen_ai.prompt.2.{k}": v for k, v in call.items()},
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": ORDER_TEXT,
        "gen_ai.prompt.3.tool_call_id": "call_1",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": WRONG_ANSWER,
        "gen_ai.completion.0.finish_reason": "stop",
    }
    return [span(trace, "openai.chat", 10, 200, first), span(trace, "openai.chat", 300, 400, second)]


def test_openllmetry_legacy_attributes_read_as_one_checked_conversation() -> None:
    conversation = read_one(traces(legacy_spans()))
    assert conversation["agent"]["model"] == MODEL
    assert_order_desk_loop(conversation)
    assert conversation["turns"][0]["tools_offered"] == [
        {"name": "get_order", "parameters": GET_ORDER_SCHEMA}
    ]
    assert conversation["metadata"] == {}  # every result paired by its id
    assert "count_misstatement" in flagged(conversation)


@pytest.mark.parametrize("index", ["\u00b2", "\u0663", "1" * 5000])
def test_a_legacy_index_in_other_digits_is_no_index(client: Any, api_key: str, index: str) -> None:
    """ "gen_ai.prompt.².content" was read as an index, and int() raised on it: a 500."""
    spans = legacy_spans()
    spans[1]["attributes"].append({"key": f"gen_ai.prompt.{index}.content", "value": {"stringValue": "x"}})
    response = client.post(
        "/v1/traces",
        data=body(traces(spans)),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert response.status_code == 200, response.content
    assert Conversation.objects.get().document["turns"][0]["messages"][-1]["content"] == WRONG_ANSWER


def test_a_legacy_export_over_the_endpoint_is_stored_not_refused(client: Any, api_key: str) -> None:
    response = client.post(
        "/v1/traces",
        data=body(traces(legacy_spans())),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert response.status_code == 200 and response.json() == {}
    assert Conversation.objects.get().document["turns"][0]["messages"][-1]["content"] == WRONG_ANSWER


def test_content_events_of_the_conventions_before_1_28_are_read() -> None:
    """gen_ai.content.prompt / gen_ai.content.completion events, Chat Completions messages as JSON."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": ARGUMENTS}}
    prompt = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": ORDER_TEXT, "tool_call_id": "call_1"},
    ]
    chat = span(
        "content-events",
        "chat " + MODEL,
        0,
        100,
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL},
        events=[
            ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(prompt)}),
            (
                "gen_ai.content.completion",
                {"gen_ai.completion": json.dumps([{"role": "assistant", "content": WRONG_ANSWER}])},
            ),
        ],
    )
    conversation = read_one(traces([chat]))
    assert_order_desk_loop(conversation)
    assert "count_misstatement" in flagged(conversation)


# --- GenAI events on spans (Strands) -------------------------------------------------------


def strands_spans(trace: str = "strands") -> list[dict[str, Any]]:
    """Strands' default: content as Bedrock blocks in JSON, in `content` / `message` attributes
    of gen_ai.*.message and gen_ai.choice events on the model, tool and agent spans."""
    question = ("gen_ai.user.message", {"content": json.dumps([{"text": QUESTION}])})
    use = [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_order", "input": {"order_id": "A-1001"}}}]
    result = [
        {"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": [{"text": ORDER_TEXT}]}}
    ]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL, "gen_ai.system": "strands-agents"}
    return [
        span(
            trace,
            "chat",
            10,
            200,
            chat,
            events=[question, ("gen_ai.choice", {"message": json.dumps(use), "finish_reason": "tool_use"})],
        ),
        span(
            trace,
            "execute_tool get_order",
            210,
            260,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_order",
                "gen_ai.tool.call.id": "tooluse_1",
            },
            events=[
                ("gen_ai.tool.message", {"role": "tool", "content": ARGUMENTS, "id": "tooluse_1"}),
                ("gen_ai.choice", {"message": json.dumps([{"text": ORDER_TEXT}]), "id": "tooluse_1"}),
            ],
        ),
        span(
            trace,
            "chat",
            270,
            400,
            chat,
            events=[
                question,
                ("gen_ai.assistant.message", {"content": json.dumps(use)}),
                ("gen_ai.tool.message", {"content": json.dumps(result)}),  # a message holding toolResult
                (
                    "gen_ai.choice",
                    {"message": json.dumps([{"text": WRONG_ANSWER}]), "finish_reason": "end_turn"},
                ),
            ],
        ),
        span(
            trace,
            "invoke_agent order-desk",
            0,
            410,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "order-desk"},
            events=[question, ("gen_ai.choice", {"message": WRONG_ANSWER})],
        ),
    ]


def test_strands_span_events_read_as_one_checked_conversation() -> None:
    conversation = read_one(traces(strands_spans()))
    assert conversation["agent"] == {"name": "order-desk", "model": MODEL}
    assert_order_desk_loop(conversation, call_id="tooluse_1")
    (receipt,) = conversation["turns"][0]["receipts"]
    assert (receipt["call_id"], receipt["tool"], receipt["ok"]) == ("tooluse_1", "get_order", True)
    assert "count_misstatement" in flagged(conversation)


def test_strands_latest_conventions_read_as_one_checked_conversation() -> None:
    """With gen_ai_latest_experimental, Strands writes operation-details events holding
    GenAI messages whose tool results are Bedrock content blocks."""
    user = {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
    called = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "tooluse_1", "name": "get_order", "arguments": {"order_id": "A-1001"}}
        ],
    }
    answered = {
        "role": "user",
        "parts": [{"type": "tool_call_response", "id": "tooluse_1", "response": [{"text": ORDER_TEXT}]}],
    }
    details = "gen_ai.client.inference.operation.details"
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.provider.name": "strands-agents",
    }

    def call(start: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
        return span(
            "strands-latest",
            "chat",
            start,
            start + 100,
            chat,
            events=[
                (details, {"gen_ai.input.messages": json.dumps(inputs)}),
                (details, {"gen_ai.output.messages": json.dumps(outputs)}),
            ],
        )

    conversation = read_one(
        traces(
            [
                call(0, [user], [called]),
                call(
                    200,
                    [user, called, answered],
                    [{"role": "assistant", "parts": [{"type": "text", "content": WRONG_ANSWER}]}],
                ),
            ]
        )
    )
    assert_order_desk_loop(conversation, call_id="tooluse_1")
    (result,) = [m for m in conversation["turns"][0]["messages"] if m["role"] == "tool"]
    assert result["content"] == ORDER_TEXT  # the block's text, not the blocks as JSON
    assert "count_misstatement" in flagged(conversation)


def test_a_tool_span_gives_the_result_the_chat_spans_do_not_carry() -> None:
    spans = strands_spans()
    del spans[2]  # the second model call never exported: no span shows the tool's result
    spans.append(
        span(
            "strands",
            "chat",
            270,
            400,
            {"gen_ai.operation.name": "chat", "gen_ai.request.model": MODEL},
            events=[
                ("gen_ai.user.message", {"content": json.dumps([{"text": QUESTION}])}),
                (
                    "gen_ai.assistant.message",
                    {
                        "content": json.dumps(
                            [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_order", "input": {}}}]
                        )
                    },
                ),
                ("gen_ai.choice", {"message": json.dumps([{"text": WRONG_ANSWER}])}),
            ],
        )
    )
    conversation = read_one(traces(spans))
    (result,) = [m for m in conversation["turns"][0]["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "tooluse_1" and json.loads(result["content"])["item_count"] == 2


# --- lossy producers -----------------------------------------------------------------------


def semconv_chat(trace: str, start: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    return span(
        trace,
        "chat",
        start,
        start + 100,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": MODEL,
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    )


def user_says() -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}


def answer() -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": WRONG_ANSWER}]}


def test_a_responses_call_id_answered_by_another_id_is_paired_by_name_and_order() -> None:
    called = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "fc_68a1", "name": "get_order", "arguments": ARGUMENTS}],
    }
    output = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_Q2x", "response": ORDER_TEXT}],
    }
    tool = span(
        "fc",
        "execute_tool get_order",
        120,
        150,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_order",
            "gen_ai.tool.call.id": "call_Q2x",
        },
    )
    conversation = read_one(
        traces(
            [
                semconv_chat("fc", 0, [user_says()], [called]),
                tool,
                semconv_chat("fc", 200, [user_says(), called, output], [answer()]),
            ]
        )
    )
    assert_order_desk_loop(conversation, call_id="fc_68a1")
    (receipt,) = conversation["turns"][0]["receipts"]
    assert receipt["call_id"] == "fc_68a1" and receipt["ok"] is True
    assert conversation["metadata"] == {"pairing": BY_NAME_AND_ORDER}
    assert "count_misstatement" in flagged(conversation)


REPR = (
    "[ChatCompletionMessageToolCall(id='call_1', function=Function(arguments='{\"order_id\": \"A-1001\"}', "
    "name='get_order'), type='function')]"
)


def test_tool_calls_written_as_a_python_repr_are_read_as_calls() -> None:
    called = {"role": "assistant", "parts": [{"type": "text", "content": REPR}]}
    output = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1", "response": ORDER_TEXT}],
    }
    conversation = read_one(
        traces(
            [
                semconv_chat("repr", 0, [user_says()], [called]),
                semconv_chat("repr", 200, [user_says(), called, output], [answer()]),
            ]
        )
    )
    assert_order_desk_loop(conversation)
    assert conversation["turns"][0]["messages"][1]["content"] is None  # the repr is not kept as prose
    assert "count_misstatement" in flagged(conversation)


@pytest.mark.parametrize(
    "text",
    [
        "I looked it up (order A-1001) and it has shipped.",
        "[1, 2, 3]",
        "__import__('os').system('true')",
        "[{'id': 'x', 'function': {'name': 'get_order', 'arguments': f()}}]",
    ],
)
def test_text_that_only_looks_like_code_stays_text(text: str) -> None:
    conversation = read_one(
        traces(
            [
                semconv_chat(
                    "prose",
                    0,
                    [user_says()],
                    [{"role": "assistant", "parts": [{"type": "text", "content": text}]}],
                )
            ]
        )
    )
    last = conversation["turns"][0]["messages"][-1]
    assert last == {"role": "assistant", "content": text}


# --- near misses ---------------------------------------------------------------------------


def test_an_llm_span_with_no_content_is_refused_with_a_reason() -> None:
    hidden = {"openinference.span.kind": "LLM", "llm.model_name": MODEL, "llm.token_count.prompt": 40}
    reading = otel.read(traces([span("hidden", "ChatCompletion", 0, 100, hidden)]))
    assert reading.conversations == []
    (skipped,) = reading.skipped
    assert skipped["external_id"] == trace_id("hidden")
    assert "llm.input_messages" in skipped["reason"]


def test_spans_of_no_genai_convention_are_refused_not_taken_in_silence(client: Any, api_key: str) -> None:
    http = span("web", "GET /orders", 0, 10, {"http.request.method": "GET", "url.path": "/orders"})
    response = client.post(
        "/v1/traces",
        data=body(traces([http])),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) >= 1
    assert "no GenAI convention" in partial["errorMessage"]
    assert not Conversation.objects.exists()


# --- captures of real libraries ------------------------------------------------------------


def captures() -> list[Path]:
    return sorted(p for p in CAPTURES.iterdir() if (p / "meta.json").is_file()) if CAPTURES.is_dir() else []


@pytest.mark.parametrize("capture", captures(), ids=lambda p: p.name)
def test_each_capture_of_a_real_library_is_stored_whole_and_flagged(
    capture: Path, client: Any, api_key: str, django_capture_on_commit_callbacks: Any
) -> None:
    meta = json.loads((capture / "meta.json").read_text())
    for export in meta["exports"]:
        headers = {"Authorization": f"Bearer {api_key}"}
        if export.get("content_encoding"):
            headers["Content-Encoding"] = export["content_encoding"]
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                export["path"],
                data=(capture / export["file"]).read_bytes(),
                content_type=export["content_type"],
                headers=headers,
            )
        assert response.status_code == 200, (export["file"], response.content[:500])
    (conversation,) = Conversation.objects.all()
    messages = [m for turn in conversation.document["turns"] for m in turn["messages"]]
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"] == meta["loop"]["answer"]
    calls = [c for m in messages for c in m.get("tool_calls") or ()]
    assert [c["function"]["name"] for c in calls] == [meta["loop"]["tool"]]
    assert any(m["role"] == "tool" for m in messages)
    codes = set(
        Finding.objects.filter(turn__conversation=conversation).flags().values_list("code", flat=True)
    )
    assert "count_misstatement" in codes
