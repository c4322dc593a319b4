"""GenAI events, on a span or as OTLP log records, read as one call's messages.

Instrumentations that keep message content off span attributes write it as events:

- the official OpenAI instrumentation (``opentelemetry-instrumentation-openai-v2``) emits
  log records ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message`` (the body holds ``content``,
  ``tool_calls``, and a tool message's ``id``) and ``gen_ai.choice`` (the body's
  ``message``); in its newer event-only mode one ``gen_ai.client.inference.operation.details``
  record whose attributes are ``gen_ai.input.messages`` / ``gen_ai.output.messages``;
- Strands puts the same event names on its spans, the content as JSON text of Bedrock
  content blocks in a ``content`` (or, on ``gen_ai.choice``, ``message``) attribute; on an
  ``execute_tool`` span the choice is the tool's result.

``as_semconv`` gives the GenAI attributes the events of one call mean, so ``otel`` reads
them as it reads ``gen_ai.input.messages`` on a span.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .common import text_of
from .content_blocks import parts, result_of
from .flat_attributes import json_value

MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.prompt": "user",  # OpenLLMetry's event mode
}
CHOICE = "gen_ai.choice"
DETAILS = "gen_ai.client.inference.operation.details"
# What an operation-details event carries that the span would otherwise carry.
DETAIL_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "gen_ai.operation.name",
    "gen_ai.conversation.id",
    "gen_ai.agent.name",
)


# What a message event says, in its body or (Strands) its attributes.
FIELDS = frozenset({"content", "message", "role", "id", "tool_call_id", "tool_calls", "index"})


@dataclass(frozen=True)
class Event:
    """A span event or a log record: its name, attributes and (for a log record) body."""

    name: str
    attributes: dict[str, Any]
    body: Any = None
    time: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def is_genai(event: Event) -> bool:
    return event.name in MESSAGE_EVENTS or event.name in (CHOICE, DETAILS)


def as_semconv(events: list[Event], *, tool_span: bool = False) -> dict[str, Any]:
    """The GenAI attributes the events of one call mean: input and output messages (or, for
    an ``execute_tool`` span, the tool's call id and result); empty when none is GenAI."""
    out: dict[str, Any] = {}
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for event in events:
        fields = _fields(event)
        if event.name == DETAILS:
            for key in DETAIL_KEYS:
                if key in event.attributes:
                    out.setdefault(key, event.attributes[key])
        elif tool_span and event.name in (CHOICE, "gen_ai.tool.message"):
            call_id = fields.get("id") or fields.get("tool_call_id")
            if isinstance(call_id, str) and call_id:
                out.setdefault("gen_ai.tool.call.id", call_id)
            if event.name == CHOICE:
                out["gen_ai.tool.call.result"] = result_of(json_value(fields.get("message")))
            elif "content" in fields:
                out.setdefault("gen_ai.tool.call.arguments", fields["content"])
        elif event.name in MESSAGE_EVENTS:
            inputs.append(message(fields, MESSAGE_EVENTS[event.name]))
        elif event.name == CHOICE and fields.get("index", 0) in (0, "0", None):
            chosen = fields.get("message")
            if isinstance(chosen, dict):
                outputs.append(message(chosen, "assistant"))
            elif chosen is not None:
                outputs.append({"role": fields.get("role") or "assistant", "parts": parts(chosen)})
    if inputs:
        out["gen_ai.input.messages"] = inputs
    if outputs:
        out["gen_ai.output.messages"] = outputs
    return out


def _fields(event: Event) -> dict[str, Any]:
    """The event's fields: its body's keys (a body that is text is the content), then its
    attributes for what the body does not say."""
    body = event.body
    if isinstance(body, str):
        decoded = json_value(body)  # some SDKs send the body as JSON text
        if isinstance(decoded, dict) and FIELDS & set(decoded):
            body = decoded
    fields: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    if isinstance(body, str) and body:
        fields["content"] = body
    for key in FIELDS:
        if key not in fields and key in event.attributes:
            fields[key] = event.attributes[key]
    return fields


def message(fields: dict[str, Any], role: str) -> dict[str, Any]:
    """One message event's fields (or a choice's message) as a semantic-convention message."""
    given = fields.get("role")
    role = given if isinstance(given, str) and given else role
    found = parts(fields["content"]) if fields.get("content") is not None else []
    calls = json_value(fields.get("tool_calls"))
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        function = call["function"] if isinstance(call.get("function"), dict) else call
        found.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    if role == "tool" and not any(p.get("type") == "tool_call_response" for p in found):
        answer = text_of(found, ("text",), "content")  # text parts hold strings
        call_id = fields.get("id") or fields.get("tool_call_id")
        found = [{"type": "tool_call_response", "id": call_id, "response": answer}]
    return {"role": role, "parts": found}
