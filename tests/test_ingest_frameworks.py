"""Framework dumps over REST: LangChain, pydantic-ai, Bedrock Converse / Strands, an
Anthropic request with its response, and Responses requests chained by
`previous_response_id`.

The payloads in tests/ingest_payloads/ were dumped by the frameworks themselves from the
demo conversations (make_framework_payloads.py there says how and with which versions);
each must read whole, tool call, tool result and answer, give the findings the native
conversation gives, and nothing it does not understand may be dropped in silence.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.ingest import Unreadable, detect_format, to_native
from checks.ingestion import IngestError, InvalidPayload, to_document
from checks.models import Conversation, Finding
from checks.suite.conversation import canonical, parse
from tests.test_ingest_adapters import DEMOS, judged, native_original, payloads

# Each fixture file, and the format that reads it.
FIXTURES = {
    "langchain": "langchain",
    "langchain_dict": "langchain",
    "langchain_dumpd": "langchain",
    "pydantic_ai": "pydantic-ai",
    "bedrock": "bedrock",
}


def fixture(name: str, key: str) -> dict[str, Any]:
    return copy.deepcopy(payloads(name)[key])


def anthropic_with_response(key: str) -> dict[str, Any]:
    """An Anthropic request whose last message came back as the API's response."""
    payload = copy.deepcopy(payloads("anthropic")[key])
    reply = payload["messages"].pop()
    payload["response"] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": payload["model"],
        "content": reply["content"],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 418, "output_tokens": 37},
    }
    return payload


def unreadable_paths(payload: Any, fmt: str | None = None) -> list[str]:
    with pytest.raises(Unreadable) as caught:
        to_native(payload, fmt)
    return [e["path"] for e in caught.value.errors]


# --- one conversation, every framework, the same findings --------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("key", sorted(DEMOS))
def test_each_framework_dump_gives_the_findings_of_the_native_conversation(name: str, key: str) -> None:
    original = native_original(key)
    conversation = to_native(fixture(name, key), FIXTURES[name])
    assert judged(conversation) == judged(original)
    ours, theirs = parse(conversation), parse(original)
    assert [[(m.role, m.text) for m in t.messages if m.role != "tool"] for t in ours.turns] == [
        [(m.role, m.text) for m in t.messages if m.role != "tool"] for t in theirs.turns
    ]
    assert [[(c.tool, json.loads(c.arguments)) for c in t.tool_calls] for t in ours.turns] == [
        [(c.tool, json.loads(c.arguments)) for c in t.tool_calls] for t in theirs.turns
    ]
    assert [[json.loads(m.text) for m in t.messages if m.role == "tool"] for t in ours.turns] == [
        [json.loads(m.text) for m in t.messages if m.role == "tool"] for t in theirs.turns
    ]


@pytest.mark.parametrize("key", sorted(DEMOS))
def test_an_anthropic_request_with_its_response_reads_as_the_whole_transcript(key: str) -> None:
    payload = anthropic_with_response(key)
    assert detect_format(payload) == "anthropic"
    assert canonical(to_native(payload)) == canonical(to_native(payloads("anthropic")[key], "anthropic"))


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("key", sorted(DEMOS))
def test_each_framework_dump_is_detected_as_its_format(name: str, key: str) -> None:
    payload = fixture(name, key)
    assert detect_format(payload) == FIXTURES[name]
    assert to_native(payload, "auto") == to_native(payload, FIXTURES[name])


@pytest.mark.parametrize("name", [*sorted(FIXTURES), "anthropic+response"])
def test_the_claimed_failed_write_is_flagged_in_every_framework(name: str) -> None:
    payload = anthropic_with_response("04") if name == "anthropic+response" else fixture(name, "04")
    (turn,) = parse(to_native(payload, "auto")).turns
    assert [(m.role, bool(m.tool_calls)) for m in turn.messages] == [
        ("user", False),
        ("assistant", True),
        ("tool", False),
        ("assistant", False),
    ]
    assert turn.answer == "Done! I've saved your favourite tea as sencha."
    (receipt,) = turn.receipts
    assert (receipt.tool, receipt.ok) == ("memory_remember", False)
    codes = {code for (_, _, code, *_rest) in judged(to_native(payload, "auto"))["findings"]}
    assert "failed_action_claimed" in codes


def test_the_existing_formats_are_not_taken_by_the_new_rules() -> None:
    for fmt in ("openai", "responses", "anthropic"):
        for key in DEMOS:
            assert detect_format(payloads(fmt)[key]) == fmt


# --- LangChain ---------------------------------------------------------------------------


def langchain_payload(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"external_id": "lc-1", "messages": [{"type": "human", "content": "Find order A-7."}, *messages]}


def test_langchain_keeps_invalid_tool_calls_raw_and_reads_chunks_chat_roles_and_string_blocks() -> None:
    payload = langchain_payload(
        {
            "type": "AIMessageChunk",
            "content": "",
            "tool_calls": [],
            "invalid_tool_calls": [
                {
                    "name": "find_order",
                    "args": '{"id": "A-7"',
                    "id": "call_1",
                    "error": "bad JSON",
                    "type": "x",
                }
            ],
        },
        {"type": "tool", "content": [{"id": "A-7", "state": "shipped"}], "tool_call_id": "call_1"},
        {
            "type": "chat",
            "role": "assistant",
            "content": ["Order A-7 ", {"type": "text", "text": "has shipped."}],
        },
    )
    assert detect_format(payload) == "langchain"
    (turn,) = canonical(to_native(payload))["turns"]
    call = turn["messages"][1]["tool_calls"][0]
    assert call["function"] == {"name": "find_order", "arguments": '{"id": "A-7"'}
    assert turn["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '[{"id":"A-7","state":"shipped"}]',
    }
    assert turn["messages"][3] == {"role": "assistant", "content": "Order A-7 \nhas shipped."}


@pytest.mark.parametrize("name", ["langchain", "langchain_dict", "langchain_dumpd"])
def test_langchain_content_blocks_chunks_and_chat_messages_read_whole(name: str) -> None:
    """Written by the library: LangChain's own blocks, a chunk, a list result, a chat role."""
    payload = fixture(name, "variants")
    assert detect_format(payload) == "langchain"
    (turn,) = canonical(to_native(payload))["turns"]
    assert turn["messages"] == [
        {"role": "user", "content": "Where is order A-7?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "find_order", "arguments": '{"order":"A-7"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": '[{"order":"A-7","state":"shipped","parcels":2}]',
            "tool_call_id": "call_1",
        },
        {"role": "assistant", "content": "Order A-7 has shipped "},
        {"role": "assistant", "content": "in 3 parcels."},
    ]


def test_langchain_a_failed_tool_message_is_a_failed_call() -> None:
    payload = langchain_payload(
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "find_order", "args": {"id": "A-7"}, "id": "c1"}],
        },
        {"type": "tool", "content": "order service unavailable", "tool_call_id": "c1", "status": "error"},
        {"type": "ai", "content": "Order A-7 has shipped."},
    )
    (turn,) = parse(to_native(payload, "langchain")).turns
    (receipt,) = turn.receipts
    assert receipt.ok is False


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({"type": "ai", "content": [{"type": "hologram", "data": "…"}]}, "$.messages[1].content[0]"),
        (
            {"type": "ai", "data": {"content": [{"type": "text", "text": 7}]}},
            "$.messages[1].data.content[0].text",
        ),
        ({"type": "remove", "content": "", "id": "m1"}, "$.messages[1].type"),
        (
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "RemoveMessage"],
                "kwargs": {},
            },
            "$.messages[1].kwargs",
        ),
        ({"type": "chat", "role": "critic", "content": "No."}, "$.messages[1].role"),
    ],
)
def test_langchain_refuses_what_it_does_not_know_by_its_path(message: dict[str, Any], path: str) -> None:
    payload = langchain_payload(message, {"type": "ai", "content": "Done."})
    assert unreadable_paths(payload, "langchain") == [path]


def test_a_langchain_transcript_with_no_answer_is_refused() -> None:
    payload = langchain_payload({"type": "ai", "content": [{"type": "reasoning", "reasoning": "hm"}]})
    assert unreadable_paths(payload) == ["$.messages"]


# --- pydantic-ai -------------------------------------------------------------------------


def pydantic_ai_payload(
    *response_parts: dict[str, Any], request: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "external_id": "pai-1",
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Cancel order A-7."}]},
            {"kind": "response", "model_name": "gpt-5-mini", "parts": list(response_parts)},
            *(
                [
                    {"kind": "request", "parts": request},
                    {
                        "kind": "response",
                        "parts": [{"part_kind": "text", "content": "Order A-7 is cancelled."}],
                    },
                ]
                if request is not None
                else []
            ),
        ],
    }


CANCEL = {"part_kind": "tool-call", "tool_name": "cancel_order", "args": '{"id":"A-7"}', "tool_call_id": "c1"}


@pytest.mark.parametrize(
    "answer",
    [
        {"part_kind": "tool-return", "tool_name": "cancel_order", "tool_call_id": "c1",
         "content": {"ok": False}, "outcome": "failed"},
        {"part_kind": "retry-prompt", "tool_name": "cancel_order", "tool_call_id": "c1",
         "content": [{"type": "missing", "loc": ["reason"], "msg": "Field required"}]},
    ],
)  # fmt: skip
def test_pydantic_ai_a_failed_or_retried_tool_call_is_a_failed_call(answer: dict[str, Any]) -> None:
    payload = pydantic_ai_payload(CANCEL, request=[answer])
    assert detect_format(payload) == "pydantic-ai"
    doc = canonical(to_native(payload))
    assert doc["agent"]["model"] == "gpt-5-mini"
    (turn,) = parse(doc).turns
    assert turn.tool_calls[0].arguments == '{"id":"A-7"}'  # kept as written
    (receipt,) = turn.receipts
    assert receipt.ok is False
    assert "failed_action_claimed" in {f[2] for f in judged(doc)["findings"]}


def test_a_real_pydantic_ai_run_with_a_retried_call_reads_whole() -> None:
    """The library answers a retried call with its own tool-return part (outcome retried)."""
    doc = canonical(to_native(fixture("pydantic_ai", "retried"), "auto"))
    assert doc["system"] == "Answer from the order system only."
    (turn,) = parse(doc).turns
    assert [m.role for m in turn.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [(r.call_id, r.ok) for r in turn.receipts] == [("call_1", False), ("call_2", True)]
    assert turn.answer == "Order A-7 is cancelled."


def test_pydantic_ai_feedback_that_names_no_tool_is_the_frameworks_not_the_users() -> None:
    payload = pydantic_ai_payload(
        {"part_kind": "text", "content": "maybe"},
        request=[{"part_kind": "retry-feedback", "content": "Please answer in JSON."}],
    )
    (turn,) = parse(to_native(payload, "pydantic-ai")).turns  # one turn: no new user message
    assert [m.role for m in turn.messages] == ["user", "assistant", "system", "assistant"]


def test_pydantic_ai_refuses_an_unknown_part_and_a_history_with_no_answer() -> None:
    payload = pydantic_ai_payload({"part_kind": "hologram", "content": "…"})
    assert unreadable_paths(payload, "pydantic-ai") == ["$.messages[1].parts[0]"]
    silent = pydantic_ai_payload({"part_kind": "thinking", "content": "Let me see."})
    assert unreadable_paths(silent, "pydantic-ai") == ["$.messages"]


# --- Bedrock Converse / Strands ----------------------------------------------------------


def strands_messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"text": "How many open tickets does ACME have?"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "x"}}},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_1",
                        "name": "list_tickets",
                        "input": {"customer": "ACME"},
                    }
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"json": {"tickets": [{"id": "T-1"}, {"id": "T-2"}]}}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "ACME has 5 open tickets."}]},
    ]


def test_a_strands_agents_messages_read_whole_and_a_wrong_count_is_flagged() -> None:
    payload = {
        "external_id": "strands-1",
        "tools": [{"name": "list_tickets", "description": "…", "inputSchema": {"json": {"type": "object"}}}],
        "messages": strands_messages(),
    }
    assert detect_format(payload) == "bedrock"
    doc = canonical(to_native(payload))
    (turn,) = doc["turns"]
    assert turn["tools_offered"] == [{"name": "list_tickets", "parameters": {"type": "object"}}]
    assert turn["messages"][1]["tool_calls"][0]["function"] == {
        "name": "list_tickets",
        "arguments": '{"customer":"ACME"}',
    }
    assert turn["messages"][2]["content"] == '{"tickets":[{"id":"T-1"},{"id":"T-2"}]}'
    assert "count_misstatement" in {f[2] for f in judged(doc)["findings"]}


def test_bedrock_an_error_status_is_a_failed_call_and_text_results_are_joined() -> None:
    messages = strands_messages()
    messages[2]["content"][0]["toolResult"] = {
        "toolUseId": "tooluse_1",
        "content": [{"text": "Error:"}, {"text": "ticket service timed out"}],
        "status": "error",
    }
    (turn,) = parse(to_native({"external_id": "s", "messages": messages}, "bedrock")).turns
    assert turn.messages[2].text == "Error:\nticket service timed out"
    (receipt,) = turn.receipts
    assert receipt.ok is False


def test_bedrock_refuses_unknown_blocks_and_an_empty_answer_by_path() -> None:
    messages = strands_messages()
    messages[3]["content"].append({"hologram": {"data": "…"}})
    messages[2]["content"][0]["toolResult"]["content"].append({"sound": "…"})
    assert unreadable_paths({"external_id": "s", "messages": messages}, "bedrock") == [
        "$.messages[2].content[0].toolResult.content[1]",
        "$.messages[3].content[1]",
    ]
    silent = [strands_messages()[0], {"role": "assistant", "content": [{"reasoningContent": {}}]}]
    assert unreadable_paths({"external_id": "s", "messages": silent}, "bedrock") == ["$.messages"]


def test_payloads_the_native_reading_would_drop_parts_of_are_refused_as_native() -> None:
    bedrock = fixture("bedrock", "05")
    assert unreadable_paths(bedrock, "native") == ["$.output"]
    assert unreadable_paths({"external_id": "s", "messages": strands_messages()}, "native") == [
        "$.messages[0].content[0]"
    ]
    assert unreadable_paths(anthropic_with_response("05"), "native") == ["$.response"]
    with pytest.raises(InvalidPayload) as caught:
        to_document(bedrock)  # the API's default format
    assert "?format=bedrock" in caught.value.errors[0]["message"]


# --- over the API ------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_a_framework_dump_posted_with_auto_is_stored_whole_and_checked(
    post_conversation: Any, name: str
) -> None:
    response = post_conversation(fixture(name, "05"), query="?format=auto")
    assert response.status_code == 201, response.json()
    conversation = Conversation.objects.get(pk=response.json()["id"])
    (turn,) = conversation.document["turns"]
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert conversation.payloads.get().format == FIXTURES[name]
    assert "count_misstatement" in set(
        Finding.objects.filter(conversation=conversation).values_list("code", flat=True)
    )


@pytest.mark.django_db
def test_an_unknown_block_is_a_400_naming_its_path(post_conversation: Any) -> None:
    payload = fixture("bedrock", "05")
    payload["output"]["message"]["content"].append({"hologram": {}})
    response = post_conversation(payload, query="?format=bedrock")
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["$.output.message.content[1]"]
    assert not Conversation.objects.exists()
    native_default = post_conversation(fixture("bedrock", "05"))
    assert native_default.status_code == 400
    assert native_default.json()["errors"][0]["path"] == "$.output"


# --- Responses chained by previous_response_id --------------------------------------------


TOOLS = [{"type": "function", "name": "memory_remember", "parameters": {"type": "object", "properties": {}}}]


def first_response() -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-4.1",
        "tools": TOOLS,
        "input": "Remember that my favourite tea is sencha.",
        "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "memory_remember",
             "arguments": '{"text":"favourite tea: sencha"}', "status": "completed"},
        ],
    }  # fmt: skip


def second_response() -> dict[str, Any]:
    return {
        "id": "resp_2",
        "object": "response",
        "model": "gpt-4.1",
        "previous_response_id": "resp_1",
        "tools": TOOLS,
        "input": [
            {"type": "function_call_output", "call_id": "call_1", "output": '{"error": "permission denied"}'}
        ],
        "output": [
            {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Done! I've saved your favourite tea as sencha.",
                          "annotations": []}]},
        ],
    }  # fmt: skip


def third_response() -> dict[str, Any]:
    return {
        "id": "resp_3",
        "object": "response",
        "previous_response_id": "resp_2",
        "tools": TOOLS,
        "input": [{"type": "message", "role": "user", "content": "And my favourite coffee?"}],
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "I don't know."}],
            }
        ],
    }


@pytest.mark.django_db
def test_responses_chained_by_previous_response_id_are_one_conversation(post_conversation: Any) -> None:
    first = post_conversation(first_response(), query="?format=responses")
    assert first.status_code == 201, first.json()
    second = post_conversation(second_response(), query="?format=auto")
    assert second.status_code == 200, second.json()
    assert second.json()["status"] == "appended"
    conversation = Conversation.objects.get()
    assert conversation.external_id == "resp_1"
    (turn,) = conversation.document["turns"]
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert conversation.document["metadata"]["response_ids"] == ["resp_1", "resp_2"]
    assert conversation.metadata["response_ids"] == ["resp_1", "resp_2"]
    codes = set(Finding.objects.filter(conversation=conversation).values_list("code", flat=True))
    assert "failed_action_claimed" in codes

    # resp_2 is found by the ids the conversation recorded, not by its name.
    third = post_conversation(third_response(), query="?format=responses")
    assert third.json()["status"] == "appended", third.json()
    conversation.refresh_from_db()
    assert len(conversation.document["turns"]) == 2
    assert conversation.document["turns"][1]["messages"][0] == {
        "role": "user",
        "content": "And my favourite coffee?",
    }
    assert conversation.metadata["response_ids"] == ["resp_1", "resp_2", "resp_3"]

    resent = post_conversation(second_response(), query="?format=responses")
    assert resent.json()["status"] == "unchanged"
    assert Conversation.objects.count() == 1


@pytest.mark.django_db
def test_a_chained_response_under_an_external_id_joins_it(post_conversation: Any) -> None:
    assert (
        post_conversation(
            {**first_response(), "external_id": "tea-chat"}, query="?format=responses"
        ).status_code
        == 201
    )
    response = post_conversation(second_response(), query="?format=responses")
    assert response.json()["status"] == "appended", response.json()
    assert Conversation.objects.get().external_id == "tea-chat"


@pytest.mark.django_db
def test_a_previous_response_id_stored_nowhere_is_a_400_naming_it(post_conversation: Any) -> None:
    response = post_conversation(second_response(), query="?format=responses")
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == ["$.previous_response_id"]
    assert not Conversation.objects.exists()


@pytest.mark.django_db
def test_a_whole_transcript_resent_with_a_new_response_id_still_appends(post_conversation: Any) -> None:
    """Senders that keep the whole history resend it with each new response's id."""
    first = {**first_response(), "external_id": "tea-chat"}
    assert post_conversation(first, query="?format=responses").status_code == 201
    whole = {
        **second_response(),
        "external_id": "tea-chat",
        "previous_response_id": None,
        "input": [{"type": "message", "role": "user", "content": first["input"]}, *first["output"],
                  *second_response()["input"]],
    }  # fmt: skip
    response = post_conversation(whole, query="?format=responses")
    assert response.json()["status"] == "appended", response.json()
    assert Conversation.objects.get().metadata["response_ids"] == ["resp_1", "resp_2"]


# --- anything else is a 400, never a server error ------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value, the value itself first."""
    found = [path]
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    )
    for key, child in children:
        found += places(child, (*path, key))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = replaced(value[path[0]], path[1:], new)
    return copied


SHAPES = [
    (name, key, fmt)
    for name, fmt in [*FIXTURES.items(), ("anthropic", "anthropic"), ("responses", "responses")]
    for key in ("04", "13")
]


# Derandomized: the same examples on every run, so the test cannot pass once and fail later;
# a search of 4,000 random examples a time found the cases it now guards.
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(SHAPES),
    where=st.integers(min_value=0),
    new=JSON,
    fmt=st.sampled_from([None, "own"]),
)
def test_any_value_anywhere_in_a_framework_payload_is_read_or_refused_by_path(
    shape: tuple[str, str, str], where: int, new: Any, fmt: str | None
) -> None:
    name, key, own = shape
    payload = payloads(name)[key]
    paths = places(payload)
    mutated = replaced(payload, paths[where % len(paths)], new)
    try:
        to_document(mutated, format=own if fmt == "own" else "native")
    except IngestError as exc:
        assert exc.status_code in (400, 413)
        assert all(e["path"] and e["message"] for e in exc.errors)


@pytest.mark.django_db
def test_a_chained_request_holding_what_is_not_an_item_is_a_400(post_conversation: Any) -> None:
    assert post_conversation(first_response(), query="?format=responses").status_code == 201
    broken = {**second_response(), "input": [7, *second_response()["input"]]}
    response = post_conversation(broken, query="?format=responses")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"].startswith("$.turns[0].messages[")
    assert Conversation.objects.get().metadata["response_ids"] == ["resp_1"]  # nothing half-written
