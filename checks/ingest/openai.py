"""OpenAI Chat Completions transcripts (`?format=openai`).

A transcript is what a Chat Completions request carries, plus the sender's id::

    {"external_id": "…", "model": "gpt-4.1",
     "tools": [{"type": "function", "function": {"name": "…", "parameters": {…}}}],
     "messages": [{"role": "developer" | "system" | "user" | "assistant" | "tool", …}]}

The native message shape *is* the Chat Completions shape, so messages pass through:
`developer` becomes `system`, tool call `arguments` stay exactly as written (even when
they are not valid JSON), and content part lists are kept. `tools` become every turn's
`tools_offered`. A response object's first choice (`choices[0].message`), when sent
along, closes the transcript.

Loggers flatten and age the shape, and each variant is read as the call or result it is
rather than refused: a tool call written flat (``{"id", "name", "arguments"}``), the legacy
``function_call`` with its ``function`` role result, a tool result logged as the object or
number the tool returned (stored as its JSON text), and results whose ids were lost or never
written, paired with the calls of their turn by name and order (``call_pairing``; the
conversation's metadata then says so).
"""

from __future__ import annotations

from typing import Any

from . import call_pairing
from .common import header, native_role, offered_tool, result_text, tool_call, with_turns

# The legacy functions API's result role, read as the tool message it is.
LEGACY_RESULT_ROLE = "function"


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    messages = payload.get("messages")
    if isinstance(messages, list):
        messages = [message(m) for m in messages]
        choices = payload.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            reply = choices[0].get("message")
            if isinstance(reply, dict):
                messages.append(message(reply))
        messages = _paired(native, messages)
    return with_turns(native, messages, tools_offered(payload.get("tools")))


def _paired(native: dict[str, Any], messages: list[Any]) -> list[Any]:
    """The messages with every result paired to a call of its turn; the metadata says when a
    pairing was inferred rather than written. A transcript validation will refuse (``_pairable``)
    or metadata that is no object is left for validation to name."""
    metadata = native.get("metadata", {})
    if not _pairable(messages) or not isinstance(metadata, dict):
        return messages
    paired, inferred = call_pairing.pair_results(messages)
    if inferred:
        native["metadata"] = metadata | {call_pairing.METADATA_KEY: call_pairing.BY_NAME_AND_ORDER}
    return paired


def _pairable(messages: list[Any]) -> bool:
    """Whether the pairing can read the transcript: objects, each call list a list of objects."""
    return all(
        isinstance(m, dict)
        and (not m.get("tool_calls") or isinstance(m["tool_calls"], list))
        and all(isinstance(call, dict) for call in m.get("tool_calls") or ())
        for m in messages
    )


def tools_offered(tools: Any) -> list[Any] | None:
    """`tools` as native `tools_offered`; None (unknown) when the payload gives no list."""
    if not isinstance(tools, list):
        return None
    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            out.append(tool)
            continue
        kind = tool.get("type", "function")
        nested = tool.get(kind) if isinstance(kind, str) else None
        spec = nested if isinstance(nested, dict) else tool
        out.append(offered_tool(spec.get("name"), spec.get("parameters")))
    return out


def message(raw: Any) -> Any:
    """One Chat Completions message in the native shape; anything unreadable passes as is."""
    if not isinstance(raw, dict):
        return raw
    role = native_role(raw.get("role"))
    if role == LEGACY_RESULT_ROLE:
        role = "tool"
    content = raw.get("content")
    if role == "assistant" and content is None and isinstance(raw.get("refusal"), str):
        content = raw["refusal"]  # what the model said instead of answering
    if role == "tool" and not _is_text(content):
        content = result_text(content)  # the value the tool returned, as its JSON text
    out: dict[str, Any] = {"role": role, "content": content}
    if role == "tool" and isinstance(raw.get("name"), str):
        out["name"] = raw["name"]  # read by the pairing when the result's id was not written
    calls = raw.get("tool_calls")
    legacy = raw.get("function_call")
    if calls is None and isinstance(legacy, dict):
        calls = [{"function": legacy}]
    if calls is not None:
        out["tool_calls"] = [_call(call) for call in calls] if isinstance(calls, list) else calls
    if "tool_call_id" in raw:
        out["tool_call_id"] = raw["tool_call_id"]
    if raw.get("is_error") is not None:
        out["is_error"] = raw["is_error"]
    return out


def _is_text(content: Any) -> bool:
    """Content the native format reads as text: a string, null, or a list of typed parts."""
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(isinstance(p, dict) and "type" in p for p in content)


def is_variant(messages: list[Any]) -> bool:
    """Whether a transcript is written in a Chat Completions variant only this reader reads:
    a flat or legacy call, a legacy result, a tool result that is no text, or results that
    pair with their calls only by name and order (``call_pairing``: an id lost or never written)."""
    if any(_is_variant_message(m) for m in messages):
        return True
    return _pairable(messages) and call_pairing.pair_results(messages)[1]


def _is_variant_message(raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    if raw.get("role") == LEGACY_RESULT_ROLE or isinstance(raw.get("function_call"), dict):
        return True
    if raw.get("role") == "tool" and not _is_text(raw.get("content")):
        return True
    calls = raw.get("tool_calls")
    return isinstance(calls, list) and any(_is_flat(call) for call in calls)


def _is_flat(call: Any) -> bool:
    return (
        isinstance(call, dict)
        and not isinstance(call.get("function"), dict)
        and isinstance(call.get("name"), str)
    )


def _call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    if _is_flat(call):
        return tool_call(call.get("id"), call["name"], call.get("arguments"))
    if call.get("type") == "custom" and isinstance(call.get("custom"), dict):
        # A custom tool's call carries free text `input` instead of JSON arguments.
        return tool_call(call.get("id"), call["custom"].get("name"), call["custom"].get("input"))
    function = call.get("function")
    if not isinstance(function, dict):
        return call  # validation names what is missing
    return tool_call(call.get("id"), function.get("name"), function.get("arguments"))
