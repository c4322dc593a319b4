"""Anthropic Messages transcripts (`?format=anthropic`).

What a Messages request carries, plus the sender's id, and the response's message when
sent along::

    {"external_id": "…", "model": "claude-sonnet-4-5", "system": "…" | [text blocks],
     "tools": [{"name": "…", "input_schema": {…}}],
     "messages": [{"role": "user" | "assistant", "content": "…" | [blocks]}],
     "response": {"type": "message", "role": "assistant", "content": [blocks], …}}

An assistant's `tool_use` blocks become its tool calls (the `input` object as compact
JSON, keys in the order received). A user message's `tool_result` blocks become one
native tool message each (`is_error` kept), placed before whatever text the user wrote
alongside, which stays a user message of its own. Text blocks are joined by newlines;
thinking, images, documents, search results and the blocks of tools the API itself runs
(`server_tool_use`, `mcp_tool_use`, `web_search_tool_result` and the other
`…_tool_result` blocks) carry no transcript text of the agent's own and are skipped.

`response` is the Message the API answered the request with: it closes the transcript as
the last assistant message (continuing the request's last assistant message when that was
a prefill). A block type this reader does not know is refused (400) with its path, and so
is a transcript whose assistant says nothing readable.
"""

from __future__ import annotations

from typing import Any

from .common import (
    Problems,
    header,
    name_of,
    offered_tool,
    require_assistant,
    result_text,
    text_of,
    tool_call,
    with_turns,
)

TEXT = ("text",)
READ = frozenset({"text", "tool_use", "tool_result"})
# Blocks with no transcript text of the agent's own: what the model thought, media, and the
# calls and results of tools the API runs itself (besides those any `…_tool_result` names).
SKIPPED = frozenset(
    {
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "search_result",
        "server_tool_use",
        "mcp_tool_use",
        "container_upload",
    }
)


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    if isinstance(payload.get("system"), list):
        native["system"] = text_of(payload["system"], TEXT)
    messages = payload.get("messages")
    if isinstance(messages, list):
        problems = Problems()
        for i, raw in enumerate(messages):
            _check_blocks(raw, f"$.messages[{i}]", problems)
        messages = [out for raw in messages for out in to_messages(raw)]
        if "response" in payload:
            messages = _with_response(messages, payload["response"], problems)
        require_assistant(messages, "$.messages", problems)
        problems.raise_any()
    return with_turns(native, messages, tools_offered(payload.get("tools")))


def is_response(value: Any) -> bool:
    """Whether a value is a Messages API response: `{"type": "message", "role": "assistant"}`."""
    return isinstance(value, dict) and value.get("type") == "message" and value.get("role") == "assistant"


def _with_response(messages: list[Any], response: Any, problems: Problems) -> list[Any]:
    """The request's messages closed by the response's message."""
    if not is_response(response) or not isinstance(response.get("content"), list):
        problems.add(
            "$.response",
            "must be the response of the Messages API: "
            '{"type": "message", "role": "assistant", "content": [blocks]}',
        )
        return messages
    _check_blocks(response, "$.response", problems)
    (reply,) = to_messages({"role": "assistant", "content": response["content"]})
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "assistant" and not last.get("tool_calls"):
        # A prefill: the response continues the assistant message the request ended with.
        prefill = last["content"] if isinstance(last.get("content"), str) else ""
        reply["content"] = (prefill + (reply.get("content") or "")) or None
        return [*messages[:-1], reply]
    return [*messages, reply]


def _check_blocks(raw: Any, path: str, problems: Problems) -> None:
    """Names each block whose type this reader does not know, rather than dropping it."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return
    for j, block in enumerate(content):
        kind = name_of(block.get("type")) if isinstance(block, dict) else None
        if kind in READ or kind in SKIPPED or (isinstance(kind, str) and kind.endswith("_tool_result")):
            continue
        problems.add(
            f"{path}.content[{j}]",
            f"is a content block of type {block.get('type') if isinstance(block, dict) else None!r}, which "
            "this reader does not know: expected text, tool_use, tool_result, thinking or media",
        )


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
