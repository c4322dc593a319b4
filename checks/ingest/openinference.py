"""OpenInference spans (Arize Phoenix's convention) read as GenAI semantic-convention spans.

Phoenix's instrumentations (OpenAI, Anthropic, LangChain, the Agents SDK, …) write:

- ``openinference.span.kind``: ``LLM`` for a model call, ``TOOL`` for a tool run, ``CHAIN``
  and ``AGENT`` for the steps around them;
- on an LLM span, ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*``
  (``role``, ``content`` or ``contents.M.message_content.text``,
  ``tool_calls.K.tool_call.id`` / ``.function.name`` / ``.function.arguments``,
  ``tool_call_id`` on a tool message), ``llm.model_name``, ``llm.tools.N.tool.json_schema``;
- on a TOOL span, ``tool.name``, ``input.value`` (the arguments), ``output.value`` (the
  result) and sometimes ``tool_call.id``;
- ``session.id`` for the conversation, ``agent.name`` (or ``graph.node.id`` on an AGENT
  span) for the agent.

``as_semconv`` gives the GenAI attributes those mean (``gen_ai.operation.name``,
``gen_ai.input.messages``, ``gen_ai.tool.call.result``, …), so the one reader in ``otel``
builds the conversation the same way whatever the convention.
"""

from __future__ import annotations

from typing import Any

from .common import text_of
from .content_blocks import parts
from .flat_attributes import has_prefix, indexed, json_value, text

KIND = "openinference.span.kind"
# Roles as LangChain and Gemini name them, which some instrumentations pass on as written.
ROLES = {"human": "user", "ai": "assistant", "model": "assistant", "function": "tool"}


def is_openinference(attributes: dict[str, Any]) -> bool:
    return (
        KIND in attributes
        or has_prefix(attributes, "llm.input_messages")
        or (has_prefix(attributes, "llm.output_messages"))
    )


def as_semconv(attributes: dict[str, Any], span_name: str = "") -> dict[str, Any]:
    """The GenAI semantic-convention attributes an OpenInference span's attributes mean;
    empty for a span that is not OpenInference."""
    if not is_openinference(attributes):
        return {}
    kind = str(attributes.get(KIND) or "").upper()
    out: dict[str, Any] = {}
    session = text(attributes.get("session.id"))
    if session:
        out["gen_ai.conversation.id"] = session
    agent = text(attributes.get("agent.name")) or (
        text(attributes.get("graph.node.id")) if kind == "AGENT" else None
    )
    if agent:
        out["gen_ai.agent.name"] = agent
    if kind == "TOOL":
        out.update(_tool(attributes, span_name))
    elif (
        kind == "LLM"
        or has_prefix(attributes, "llm.input_messages")
        or has_prefix(attributes, "llm.output_messages")
    ):
        out.update(_llm(attributes))
    elif kind in ("AGENT", "CHAIN"):
        out["gen_ai.operation.name"] = "invoke_agent" if kind == "AGENT" else "chain"
    return out


def _llm(attributes: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    for prefix, key in (
        ("llm.input_messages", "gen_ai.input.messages"),
        ("llm.output_messages", "gen_ai.output.messages"),
    ):
        if has_prefix(attributes, prefix):
            out[key] = [_message(m) for m in indexed(attributes, prefix)]
    model = text(attributes.get("llm.model_name"))
    if model:
        out["gen_ai.request.model"] = model
    tools = [json_value(t.get("tool.json_schema")) for t in indexed(attributes, "llm.tools")]
    if tools:
        out["gen_ai.tool.definitions"] = [t for t in tools if isinstance(t, dict)]
    return out


def _message(entry: dict[str, Any]) -> dict[str, Any]:
    """One ``llm.*_messages.N`` entry as a semantic-convention message (role and parts)."""
    role = entry.get("message.role")
    role = ROLES.get(role, role) if isinstance(role, str) else role
    found: list[dict[str, Any]] = []
    content = entry.get("message.content")
    if content is not None:
        found.extend(parts(content))
    for item in indexed(entry, "message.contents"):
        if item.get("message_content.type", "text") == "text" and isinstance(
            item.get("message_content.text"), str
        ):
            found.append({"type": "text", "content": item["message_content.text"]})
    for call in indexed(entry, "message.tool_calls"):
        found.append(
            {
                "type": "tool_call",
                "id": call.get("tool_call.id"),
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments"),
            }
        )
    if role == "tool":
        answer = text_of(found, ("text",), "content")  # text parts hold strings
        response: dict[str, Any] = {
            "type": "tool_call_response",
            "id": entry.get("message.tool_call_id"),
            "response": answer,
        }
        if text(entry.get("message.name")):
            response["name"] = entry["message.name"]
        found = [p for p in found if p.get("type") == "tool_call_response"] or [response]
    return {"role": role, "parts": found}


def _tool(attributes: dict[str, Any], span_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"gen_ai.operation.name": "execute_tool"}
    name = text(attributes.get("tool.name")) or text(attributes.get("tool_call.function.name")) or span_name
    if name:
        out["gen_ai.tool.name"] = name
    call_id = text(attributes.get("tool_call.id")) or text(attributes.get("tool.id"))
    if call_id:
        out["gen_ai.tool.call.id"] = call_id
    if "input.value" in attributes:
        out["gen_ai.tool.call.arguments"] = attributes["input.value"]
    if "output.value" in attributes:
        result, answered = _tool_output(attributes["output.value"])
        out["gen_ai.tool.call.result"] = result
        if answered and "gen_ai.tool.call.id" not in out:
            out["gen_ai.tool.call.id"] = answered
    return out


def _tool_output(value: Any) -> tuple[Any, str | None]:
    """A TOOL span's ``output.value``: as written, unless it is a LangChain ``ToolMessage``
    (as JSON, or serialized with ``lc`` / ``kwargs``), whose content is the result and whose
    ``tool_call_id`` names the call."""
    decoded = json_value(value)
    if isinstance(decoded, dict) and isinstance(decoded.get("kwargs"), dict):
        decoded = decoded["kwargs"]
    if isinstance(decoded, dict) and "tool_call_id" in decoded and "content" in decoded:
        content = decoded["content"]
        return (content if isinstance(content, str) else value), text(decoded.get("tool_call_id"))
    return value, None
