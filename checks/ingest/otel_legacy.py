"""OpenLLMetry's (Traceloop's) attributes from before the GenAI conventions moved to
``gen_ai.input.messages``, read as the current ones.

A chat span writes each message one key per field:
``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_call_id`` /
``.tool_calls.M.id|name|arguments`` for the input, ``gen_ai.completion.N.role`` /
``.content`` / ``.finish_reason`` / ``.tool_calls.M.id|name|arguments`` (or the older
``.function_call.name|arguments``) for the output, and the tools offered as
``llm.request.functions.N.name|description|parameters``. Its ``@tool`` spans
(``traceloop.span.kind`` ``tool``) hold the run: ``traceloop.entity.name``,
``traceloop.entity.input``, ``traceloop.entity.output``.

The GenAI conventions before v1.28 wrote a chat call's messages as JSON in one attribute
of an event: ``gen_ai.prompt`` (on ``gen_ai.content.prompt``) and ``gen_ai.completion``
(on ``gen_ai.content.completion``), Chat Completions messages; ``otel`` lifts event
attributes onto the span, so they are read here too.
"""

from __future__ import annotations

from typing import Any

from . import otel_events
from .common import text_of
from .content_blocks import parts
from .flat_attributes import has_prefix, indexed, json_value, text

PROMPT, COMPLETION = "gen_ai.prompt", "gen_ai.completion"


def as_semconv(attributes: dict[str, Any]) -> dict[str, Any]:
    """The current GenAI attributes a legacy OpenLLMetry span's attributes mean; empty for
    a span that writes none of them."""
    out: dict[str, Any] = {}
    if attributes.get("traceloop.span.kind") == "tool":
        out["gen_ai.operation.name"] = "execute_tool"
        name = text(attributes.get("traceloop.entity.name"))
        if name:
            out["gen_ai.tool.name"] = name
        if "traceloop.entity.input" in attributes:
            out["gen_ai.tool.call.arguments"] = attributes["traceloop.entity.input"]
        if "traceloop.entity.output" in attributes:
            out["gen_ai.tool.call.result"] = _entity_output(attributes["traceloop.entity.output"])
        return out
    if not (has_prefix(attributes, PROMPT) or has_prefix(attributes, COMPLETION)):
        return _content_events(attributes)
    request_type = attributes.get("llm.request.type")
    out["gen_ai.operation.name"] = "chat" if request_type in (None, "chat") else str(request_type)
    if has_prefix(attributes, PROMPT):
        out["gen_ai.input.messages"] = [_message(m, "user") for m in indexed(attributes, PROMPT)]
    if has_prefix(attributes, COMPLETION):
        out["gen_ai.output.messages"] = [_message(m, "assistant") for m in indexed(attributes, COMPLETION)]
    functions = indexed(attributes, "llm.request.functions")
    if functions:
        out["gen_ai.tool.definitions"] = [
            {"name": f.get("name"), "parameters": json_value(f.get("parameters"))} for f in functions
        ]
    return out


def _content_events(attributes: dict[str, Any]) -> dict[str, Any]:
    """``gen_ai.prompt`` / ``gen_ai.completion`` holding a JSON list of messages."""
    out: dict[str, Any] = {}
    for key, role, semconv in (
        (PROMPT, "user", "gen_ai.input.messages"),
        (COMPLETION, "assistant", "gen_ai.output.messages"),
    ):
        messages = json_value(attributes.get(key))
        if isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages):
            out[semconv] = [otel_events.message(m, role) for m in messages]
    if out:
        out["gen_ai.operation.name"] = "chat"
    return out


def _message(entry: dict[str, Any], default_role: str) -> dict[str, Any]:
    role = entry.get("role") or default_role
    found = parts(entry["content"]) if entry.get("content") is not None else []
    calls = indexed(entry, "tool_calls")
    if not calls and (entry.get("function_call.name") is not None):
        calls = [{"name": entry["function_call.name"], "arguments": entry.get("function_call.arguments")}]
    for call in calls:
        found.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": call.get("arguments"),
            }
        )
    if role == "tool":
        answer = text_of(found, ("text",), "content")  # text parts hold strings
        found = [p for p in found if p.get("type") == "tool_call_response"] or [
            {"type": "tool_call_response", "id": entry.get("tool_call_id"), "response": answer}
        ]
    return {"role": role, "parts": found}


def _entity_output(value: Any) -> Any:
    """A ``@tool``'s return value as Traceloop records it: JSON of the value (a string
    returned is JSON-quoted, which the result should not keep)."""
    decoded = json_value(value)
    return decoded if isinstance(decoded, str) else value
