"""Adapters from the formats agents speak into the native shape (CONTRACT.md §1).

Each adapter is a function from the decoded payload to a native conversation dict; the
native shape is then validated and canonicalized once, whatever the format was. OTLP
traces have their own reader (`otel`), as they arrive at their own endpoint and may hold
many conversations.
"""

from collections.abc import Callable
from typing import Any

from . import anthropic, native, openai, responses

Adapter = Callable[[Any], Any]

ADAPTERS: dict[str, Adapter] = {
    "native": native.adapt,
    "openai": openai.adapt,
    "responses": responses.adapt,
    "anthropic": anthropic.adapt,
}

AUTO = "auto"

# Content blocks only the Messages API writes.
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})


class UnknownFormat(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"unknown format {name!r}; accepted: {', '.join(sorted(ADAPTERS))} (or {AUTO} to detect it)"
        )
        self.name = name


def resolve_format(payload: Any, format: str | None = None) -> str:
    """The adapter's name for this payload: `format` itself, or the detected one for None/auto."""
    name = detect_format(payload) if format in (None, AUTO) else format
    if name not in ADAPTERS:
        raise UnknownFormat(name)
    return name


def to_native(payload: Any, format: str | None = None) -> Any:
    """The payload in the native shape; `format` None (or "auto") detects the format."""
    return ADAPTERS[resolve_format(payload, format)](payload)


def detect_format(payload: Any) -> str:
    """The format a payload is written in; `native` whenever the native reading serves.

    - `native`: not an object, has `turns`, or anything the rules below do not claim. The
      native flat `messages` form *is* the Chat Completions message shape, so a transcript
      that reads the same either way is read as native.
    - `responses`: no `messages`, and an `input` (a string or a list of items) or `output`
      list of typed items, or `"object": "response"`.
    - `anthropic`: `messages` whose content holds `tool_use`, `tool_result` or thinking
      blocks, or `tools` with `input_schema`, or `system` given as a list of blocks.
    - `openai`: `messages` with `tools` in the Chat Completions function shape
      (`{"type": "function", "function": {…}}`), a `developer` message, a response's
      `choices`, or no `external_id` where an `id` (or `metadata.external_id`) names it.
    """
    if not isinstance(payload, dict) or "turns" in payload:
        return "native"
    messages = payload.get("messages")
    if not isinstance(messages, list):
        if _is_responses(payload):
            return "responses"
        return "native"
    if _is_anthropic(payload, messages):
        return "anthropic"
    if _is_openai(payload, messages):
        return "openai"
    return "native"


def _is_responses(payload: dict[str, Any]) -> bool:
    if payload.get("object") == "response":
        return True
    for key in ("input", "output"):
        value = payload.get(key)
        if key == "input" and isinstance(value, str):
            return True
        if isinstance(value, list) and any(isinstance(item, dict) and "type" in item for item in value):
            return True
    return False


def _is_anthropic(payload: dict[str, Any], messages: list[Any]) -> bool:
    if isinstance(payload.get("system"), list):
        return True
    tools = payload.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") in ANTHROPIC_BLOCKS for block in content
        ):
            return True
    return False


def _is_openai(payload: dict[str, Any], messages: list[Any]) -> bool:
    tools = payload.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and _function_spec(t) for t in tools):
        return True
    if isinstance(payload.get("choices"), list):
        return True
    if any(isinstance(m, dict) and m.get("role") == "developer" for m in messages):
        return True
    if payload.get("external_id") in (None, ""):
        metadata = payload.get("metadata")
        return payload.get("id") not in (None, "") or (
            isinstance(metadata, dict) and metadata.get("external_id") not in (None, "")
        )
    return False


def _function_spec(tool: dict[str, Any]) -> bool:
    kind = tool.get("type", "function")
    return isinstance(kind, str) and isinstance(tool.get(kind), dict)
