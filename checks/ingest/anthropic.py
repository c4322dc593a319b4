"""Anthropic Messages transcripts (`?format=anthropic`).

What a Messages request carries, plus the sender's id::

    {"external_id": "…", "model": "claude-sonnet-4-5", "system": "…" | [text blocks],
     "tools": [{"name": "…", "input_schema": {…}}],
     "messages": [{"role": "user" | "assistant", "content": "…" | [blocks]}]}

An assistant's `tool_use` blocks become its tool calls (the `input` object as compact
JSON, keys in the order received). A user message's `tool_result` blocks become one
native tool message each (`is_error` kept), placed before whatever text the user wrote
alongside, which stays a user message of its own. Text blocks are joined by newlines;
thinking, images and documents carry no transcript text and are skipped.
"""

from __future__ import annotations

from typing import Any

from .common import header, offered_tool, result_text, text_of, tool_call, with_turns

TEXT = ("text",)


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    if isinstance(payload.get("system"), list):
        native["system"] = text_of(payload["system"], TEXT)
    messages = payload.get("messages")
    if isinstance(messages, list):
        messages = [out for raw in messages for out in to_messages(raw)]
    return with_turns(native, messages, tools_offered(payload.get("tools")))


def tools_offered(tools: Any) -> list[Any] | None:
    if not isinstance(tools, list):
        return None
    return [
        offered_tool(tool.get("name"), tool.get("input_schema")) if isinstance(tool, dict) else tool
        for tool in tools
    ]


def to_messages(raw: Any) -> list[Any]:
    """One Messages entry as native messages: tool results first, then the text, if any."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return [raw]  # a string content is already native; anything else, validation names
    role, blocks = raw.get("role"), raw["content"]
    text = text_of(blocks, TEXT)
    if role == "assistant":
        calls = [
            tool_call(block.get("id"), block.get("name"), block.get("input"))
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]
        message: dict[str, Any] = {"role": role, "content": text or None}
        if calls:
            message["tool_calls"] = calls
        return [message]
    results = [
        _tool_message(block)
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    if results and not text:
        return results
    return [*results, {"role": role, "content": text}]


def _tool_message(block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    if isinstance(content, list):
        content = text_of(content, TEXT)
    message = {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": result_text(content)}
    if block.get("is_error") is True:
        message["is_error"] = True
    return message
