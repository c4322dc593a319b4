"""OpenAI Responses API items (`?format=responses`).

The transcript is the request's `input` items followed by the response's `output` items
(either may be absent), plus the sender's id::

    {"external_id": "…", "model": "gpt-4.1", "instructions": "…",
     "tools": [{"type": "function", "name": "…", "parameters": {…}}],
     "input": "…" | [items], "output": [items]}

Items become native messages: a `message` item keeps its role (`developer` becomes
`system`) with its text parts joined by newlines; consecutive `function_call` items
become one assistant message's tool calls (joining the assistant text just before them,
as a Chat Completions message would carry both); each `function_call_output` becomes a
tool message. `instructions` is the system prompt. Reasoning and built-in tool items
(web search, file search, …) carry no transcript text and are skipped.

A response's `id` (the payload's own, when it carries `output` or `"object": "response"`)
is recorded in the document's `metadata.response_ids`. A request that names
`previous_response_id` holds only what came after that response, as the API keeps the
rest: ingestion joins it to the stored conversation that recorded that id
(`checks.response_chains`); read on its own, here, it is refused (400) rather than stored
as a conversation missing its start.
"""

from __future__ import annotations

from typing import Any

from checks.suite.conversation import content_text

from .common import Unreadable, header, native_role, offered_tool, result_text, tool_call, with_turns

TEXT_PARTS = ("input_text", "output_text", "text", "refusal")
CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
RESPONSE_IDS = "response_ids"


def adapt(payload: Any) -> Any:
    if isinstance(payload, dict) and previous_response(payload):
        raise Unreadable(
            [
                {
                    "path": "$.previous_response_id",
                    "message": "names an earlier response, so this request holds only what came after it, "
                    "and no single conversation stored in this project recorded that response: send the "
                    "earlier response first (POST /api/v1/conversations?format=responses), or the whole "
                    "conversation in `input` without previous_response_id",
                }
            ]
        )
    return read(payload)


def previous_response(payload: dict[str, Any]) -> str | None:
    """The `previous_response_id` a request continues from, if it names one."""
    value = payload.get("previous_response_id")
    return value if isinstance(value, str) and value else None


def response_id(payload: dict[str, Any]) -> str | None:
    """The id of the response a payload carries: its `id`, when it has `output` or is a response."""
    ident = payload.get("id")
    if not isinstance(ident, str) or not ident:
        return None
    if payload.get("object") == "response" or isinstance(payload.get("output"), list):
        return ident
    return None


def read(payload: Any) -> Any:
    """The payload in the native shape, whatever `previous_response_id` says."""
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    ident = response_id(payload)
    metadata = native.get("metadata", {})
    if ident is not None and isinstance(metadata, dict):
        recorded = metadata.get(RESPONSE_IDS)
        earlier = [i for i in recorded if i != ident] if isinstance(recorded, list) else []
        native["metadata"] = {**metadata, RESPONSE_IDS: [*earlier, ident]}
    instructions = _instructions(payload.get("instructions"))
    if instructions and "system" not in native:
        native["system"] = instructions
    items = _items(payload.get("input")) + _items(payload.get("output"))
    messages = to_messages(items)
    return with_turns(native, messages, tools_offered(payload.get("tools")))


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return value
    return [value]  # validation names it


def _instructions(value: Any) -> str:
    if not isinstance(value, (str, list)):
        return ""
    # A response echoes instructions as message items: each item's text is one part's.
    return content_text(value, lambda item: _text(item.get("content")))


def _text(content: Any) -> Any:
    """A string as is; a list of parts as its text (and refusal) parts joined by newlines."""
    return content_text(content, _part_text) if isinstance(content, list) else content


def _part_text(part: dict[str, Any]) -> Any:
    kind = part.get("type")
    return part.get("refusal" if kind == "refusal" else "text") if kind in TEXT_PARTS else None


def tools_offered(tools: Any) -> list[Any] | None:
    if not isinstance(tools, list):
        return None
    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            out.append(tool)
        elif tool.get("type", "function") in ("function", "custom"):
            out.append(offered_tool(tool.get("name"), tool.get("parameters")))
        else:
            # A built-in tool (web_search, file_search, …) is named by its type.
            out.append(offered_tool(tool.get("name") or tool.get("type"), None))
    return out


def to_messages(items: list[Any]) -> list[Any]:
    messages: list[Any] = []
    open_calls: dict[str, Any] | None = None  # the assistant message collecting calls
    for item in items:
        if not isinstance(item, dict):
            messages.append(item)
            open_calls = None
            continue
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = native_role(item.get("role"))
            messages.append({"role": role, "content": _text(item.get("content"))})
            open_calls = None
        elif kind in CALLS:
            arguments = item.get("arguments") if kind == "function_call" else item.get("input")
            call = tool_call(item.get("call_id"), item.get("name"), arguments)
            if open_calls is None:
                last = messages[-1] if messages else None
                if isinstance(last, dict) and last.get("role") == "assistant" and "tool_calls" not in last:
                    open_calls = last
                else:
                    open_calls = {"role": "assistant", "content": None}
                    messages.append(open_calls)
                open_calls["tool_calls"] = []
            open_calls["tool_calls"].append(call)
        elif kind in OUTPUTS:
            output = item.get("output")
            if isinstance(output, list):
                output = _text(output)
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": result_text(output)}
            )
            open_calls = None
        # reasoning, item_reference and built-in tool items carry no transcript text
    return messages
