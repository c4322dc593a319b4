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
"""

from __future__ import annotations

from typing import Any

from .common import header, native_role, offered_tool, result_text, tool_call, with_turns


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
    return with_turns(native, messages, tools_offered(payload.get("tools")))


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
    content = raw.get("content")
    if role == "assistant" and content is None and isinstance(raw.get("refusal"), str):
        content = raw["refusal"]  # what the model said instead of answering
    if role == "tool" and isinstance(content, dict):
        content = result_text(content)
    out: dict[str, Any] = {"role": role, "content": content}
    calls = raw.get("tool_calls")
    if calls is not None:
        out["tool_calls"] = [_call(call) for call in calls] if isinstance(calls, list) else calls
    if "tool_call_id" in raw:
        out["tool_call_id"] = raw["tool_call_id"]
    if raw.get("is_error") is not None:
        out["is_error"] = raw["is_error"]
    return out


def _call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    if call.get("type") == "custom" and isinstance(call.get("custom"), dict):
        # A custom tool's call carries free text `input` instead of JSON arguments.
        return tool_call(call.get("id"), call["custom"].get("name"), call["custom"].get("input"))
    function = call.get("function")
    if not isinstance(function, dict):
        return call  # validation names what is missing
    return tool_call(call.get("id"), function.get("name"), function.get("arguments"))
