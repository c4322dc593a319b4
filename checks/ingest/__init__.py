"""Adapters from the formats agents speak into the native shape (CONTRACT.md §1).

Each adapter is a function from the decoded payload to a native conversation dict; the
native shape is then validated and canonicalized once, whatever the format was. OTLP
traces have their own reader (`otel`), as they arrive at their own endpoint and may hold
many conversations.
"""

from collections.abc import Callable
from typing import Any

from . import anthropic, bedrock, langchain, native, openai, pydantic_ai, responses
from .common import Unreadable, name_of

Adapter = Callable[[Any], Any]

ADAPTERS: dict[str, Adapter] = {
    "native": native.adapt,
    "openai": openai.adapt,
    "responses": responses.adapt,
    "anthropic": anthropic.adapt,
    "langchain": langchain.adapt,
    "pydantic-ai": pydantic_ai.adapt,
    "bedrock": bedrock.adapt,
}
# Formats whose payloads the native reading would not refuse but would store with parts
# missing (untyped Converse blocks, a response beside the request, tool blocks): read as
# native, they are refused with the format that reads them.
LOSSY_AS_NATIVE = ("anthropic", "bedrock")

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
    """The payload in the native shape; `format` None (or "auto") detects the format.

    Raises Unreadable, naming each path, for what the format's reader does not understand,
    and for a payload sent as native that another format's reader would read more of.
    """
    name = resolve_format(payload, format)
    if name == "native":
        refuse_lossy_native(payload)
    return ADAPTERS[name](payload)


def refuse_lossy_native(payload: Any) -> None:
    """A payload the native reading would store with blocks dropped is refused instead.

    The native format's content parts are typed (`{"type": "text", …}`); a Converse block
    (`{"text": …}`, `{"toolUse": …}`), an Anthropic `tool_use` / `tool_result` block or a
    Messages `response` beside the request would be skipped in silence, leaving a turn
    without its calls or its answer.
    """
    detected = detect_format(payload)
    where = _first_foreign_path(payload, detected) if detected in LOSSY_AS_NATIVE else None
    if where is None:
        return
    raise Unreadable(
        [
            {
                "path": where,
                "message": f"is written in the {detected} format, which the native reading would drop; "
                f"send the payload with ?format={detected} (or ?format={AUTO})",
            }
        ]
    )


def _first_foreign_path(payload: dict[str, Any], detected: str) -> str | None:
    """Where a payload first holds what only the format it is written in reads; None if nowhere."""
    if detected == "anthropic" and "response" in payload:
        return "$.response"
    if detected == "bedrock" and isinstance(payload.get("output"), dict):
        return "$.output"
    for i, message in enumerate(payload.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and (
                name_of(block.get("type")) in ANTHROPIC_BLOCKS
                if detected == "anthropic"
                else ("type" not in block and bedrock.BLOCKS.intersection(block))
            ):
                return f"$.messages[{i}].content[{j}]"
    return None


def detect_format(payload: Any) -> str:
    """The format a payload is written in; `native` whenever the native reading serves.

    - `native`: not an object, has `turns`, or anything the rules below do not claim. The
      native flat `messages` form *is* the Chat Completions message shape, so a transcript
      that reads the same either way is read as native.
    - `responses`: no `messages`, and an `input` (a string or a list of items) or `output`
      list of typed items, or `"object": "response"`.
    - `langchain`: `messages` none of which has a `role` (but a chat message's dump), and
      one of which is a LangChain dump: a `type` of human, ai, system, tool or chat (or a
      chunk's class name) beside `content` or a `data` object, or `{"lc": 1, "id": [...]}`.
    - `pydantic-ai`: `messages` none of which has a `role`, and one of which has `parts`
      and a `kind` of request or response.
    - `bedrock`: `messages` with a `toolConfig` object, or a Converse response's
      `output.message`, or a content block with no `type` keyed by a Converse block name
      (`text`, `toolUse`, `toolResult`, `image`, `reasoningContent`, …). Checked before
      `anthropic`, as Converse's `system` is a list of blocks too.
    - `anthropic`: `messages` whose content holds `tool_use`, `tool_result` or thinking
      blocks, or `tools` with `input_schema`, or `system` given as a list of blocks, or a
      Messages API `response` (`{"type": "message", "role": "assistant"}`) beside them.
    - `openai`: `messages` with `tools` in the Chat Completions function shape
      (`{"type": "function", "function": {…}}`), a `developer` message, a response's
      `choices`, a variant of the message shape only its reader reads (a flat or legacy
      call, a tool result that is no text or whose id names no earlier call), or no
      `external_id` where an `id` (or `metadata.external_id`) names it.
    """
    if not isinstance(payload, dict) or "turns" in payload:
        return "native"
    messages = payload.get("messages")
    if not isinstance(messages, list):
        if _is_responses(payload):
            return "responses"
        return "native"
    if not any(isinstance(m, dict) and "role" in m and not langchain.is_dump(m) for m in messages):
        if any(langchain.is_dump(m) for m in messages):
            return "langchain"
        if pydantic_ai.is_history(messages):
            return "pydantic-ai"
    if bedrock.is_converse(payload, messages):
        return "bedrock"
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
    if isinstance(payload.get("system"), list) or anthropic.is_response(payload.get("response")):
        return True
    tools = payload.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(block, dict) and name_of(block.get("type")) in ANTHROPIC_BLOCKS for block in content
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
    if openai.is_variant(messages):
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
