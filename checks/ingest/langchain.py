"""LangChain message dumps (`?format=langchain`).

The messages of a LangChain run, dumped, under the native header::

    {"external_id": "…", "model": "…", "system": "…",
     "tools": [{"type": "function", "function": {"name": "…", "parameters": {…}}}],
     "messages": [<a LangChain message, dumped>, …]}

`tools` is what `bind_tools` sends (`convert_to_openai_tool`). Each message may be dumped
in any of the three ways LangChain writes one, mixed freely:

- `message.model_dump()` (or `.dict()`): `{"type": "human" | "ai" | "system" | "tool" |
  "chat", "content": …, "tool_calls": [{"name", "args", "id"}], "tool_call_id": …}`;
- `messages_to_dict(messages)`: `{"type": "ai", "data": {…the same fields…}}`;
- `dumpd(message)`: `{"lc": 1, "type": "constructor", "id": ["langchain", "schema",
  "messages", "AIMessage"], "kwargs": {…the same fields…}}`.

Streaming chunks (`AIMessageChunk`, …) read as their message. `human` is a user message,
`ai` an assistant one, `chat` takes its `role`. Content is a string or a list of strings
and blocks: text blocks are joined by newlines; reasoning, thinking and media blocks, and
the calls and results of tools the provider runs itself (`server_tool_call`,
`server_tool_use`, `…_tool_result`), carry no transcript text of the agent's own and are
skipped; a tool-call block (`tool_use`, `tool_call`, `function_call`, …) is a call unless
`tool_calls` already names its id. An AI message's
`tool_calls` become its calls (`args` as compact JSON, keys in the order received) and its
`invalid_tool_calls` too, their arguments kept raw. A tool message answers
`tool_call_id`; `status: "error"` makes it a failed call; a list of text blocks is its text
and any other list is the result itself, stored as compact JSON.

Nothing is dropped in silence: a message type, chat role or content block this reader does
not know is refused (400) with its path, and so is a transcript whose assistant says
nothing readable.
"""

from __future__ import annotations

from typing import Any

from . import openai
from .common import Problems, header, name_of, require_assistant, result_text, tool_call, with_turns

# The `type` a dump gives each message class (model_dump / messages_to_dict), and the
# class names `dumpd` writes in its `id`, each as the role it plays.
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "chat": "chat"}
CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "ChatMessage": "chat",
}
CHUNKS = {f"{name}Chunk": role for name, role in CLASSES.items()}
CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}
CHAT_ROLES |= {"system": "system", "developer": "system"}
TYPES = (*ROLES, *CHUNKS)
# Blocks with no transcript text: what the model thought, and media.
SKIPPED = frozenset(
    {
        "reasoning",
        "thinking",
        "redacted_thinking",
        "image",
        "image_url",
        "audio",
        "input_audio",
        "video",
        "file",
        "text-plain",
        # The calls and results of tools the provider runs itself (web search, code execution…).
        "server_tool_call",
        "server_tool_call_chunk",
        "server_tool_result",
        "server_tool_use",
        "mcp_tool_use",
    }
)
# Tool-call blocks, with the key each keeps its arguments under and its id under.
CALL_BLOCKS = {
    "tool_use": ("input", "id"),
    "tool_call": ("args", "id"),
    "tool_call_chunk": ("args", "id"),
    "invalid_tool_call": ("args", "id"),
    "function_call": ("arguments", "call_id"),
}


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    messages = payload.get("messages")
    if isinstance(messages, list):
        problems = Problems()
        messages = [to_message(raw, f"$.messages[{i}]", problems) for i, raw in enumerate(messages)]
        require_assistant(messages, "$.messages", problems)
        problems.raise_any()
    return with_turns(native, messages, openai.tools_offered(payload.get("tools")))


def is_dump(raw: Any) -> bool:
    """Whether a message is a LangChain dump: a `type` and no `role`, but for a chat message's."""
    if not isinstance(raw, dict) or ("role" in raw and raw.get("type") not in ("chat", "ChatMessageChunk")):
        return False
    if raw.get("lc") == 1 and isinstance(raw.get("id"), list):
        return True
    return raw.get("type") in TYPES and ("content" in raw or isinstance(raw.get("data"), dict))


def unwrapped(raw: dict[str, Any], path: str) -> tuple[Any, Any, str]:
    """The role a dump names, its fields, and their path, whichever way it was dumped."""
    if "lc" in raw:
        ident = raw.get("id")
        name = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else ""
        if raw.get("type") != "constructor":
            return None, None, f"{path}.type"
        return CLASSES.get(name) or CHUNKS.get(name), raw.get("kwargs"), f"{path}.kwargs"
    kind = raw.get("type")
    role = (ROLES.get(kind) or CHUNKS.get(kind)) if isinstance(kind, str) else None
    if isinstance(raw.get("data"), dict) and "content" not in raw:
        return role, raw["data"], f"{path}.data"
    return role, raw, path


def to_message(raw: Any, path: str, problems: Problems) -> Any:
    if not isinstance(raw, dict):
        return raw  # validation names it
    role, fields, where = unwrapped(raw, path)
    if role is None or not isinstance(fields, dict):
        problems.add(
            where if "lc" in raw else f"{path}.type",
            "is not a LangChain message this reader knows: expected a dump of a human, ai, system, "
            "tool or chat message (model_dump(), messages_to_dict() or dumpd())",
        )
        return raw
    if role == "chat":
        role = CHAT_ROLES.get(name_of(fields.get("role")) or "")
        if role is None:
            problems.add(f"{where}.role", "a chat message's role must be user, assistant or system")
            return raw
    if role == "tool":
        return _tool_message(fields, where, problems)
    text, block_calls = _content(fields.get("content"), f"{where}.content", problems)
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "assistant":
        calls = _calls(fields, where, problems)
        named = [call["id"] for call in calls]  # any JSON, so not a set: validation names a bad one
        calls += [call for call in block_calls if call["id"] not in named]
        message["content"] = text or None
        if calls:
            message["tool_calls"] = calls
    elif block_calls:
        problems.add(f"{where}.content", "holds a tool call, which only an AI message may make")
    return message


def _calls(fields: dict[str, Any], path: str, problems: Problems) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for key in ("tool_calls", "invalid_tool_calls"):
        listed = fields.get(key) or []
        if not isinstance(listed, list):
            problems.add(f"{path}.{key}", 'must be a list of {"name", "args", "id"} objects')
            continue
        for j, call in enumerate(listed):
            if isinstance(call, dict):
                calls.append(tool_call(call.get("id"), call.get("name"), call.get("args")))
            else:
                problems.add(f"{path}.{key}[{j}]", 'must be an object like {"name", "args", "id"}')
    if calls:
        return calls
    # Dumps older than `tool_calls` kept the provider's own calls in additional_kwargs.
    extra = fields.get("additional_kwargs")
    raw_calls = extra.get("tool_calls") if isinstance(extra, dict) else None
    if isinstance(raw_calls, list):
        return [
            tool_call(call.get("id"), call["function"].get("name"), call["function"].get("arguments"))
            for call in raw_calls
            if isinstance(call, dict) and isinstance(call.get("function"), dict)
        ]
    return []


def _content(content: Any, path: str, problems: Problems) -> tuple[str, list[dict[str, Any]]]:
    """A message's text, and the tool calls its blocks make."""
    if content is None or isinstance(content, str):
        return content or "", []
    if not isinstance(content, list):
        problems.add(path, "must be a string or a list of strings and content blocks")
        return "", []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            problems.add(f"{path}[{j}]", "must be a string or a content block object")
            continue
        kind = name_of(block.get("type"))
        if kind in SKIPPED or (isinstance(kind, str) and kind.endswith("_tool_result")):
            continue
        if kind == "text":
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            else:
                problems.add(f"{path}[{j}].text", "must be a string")
        elif kind in CALL_BLOCKS:
            args_key, id_key = CALL_BLOCKS[kind]
            call_id = block.get(id_key) or block.get("id")
            calls.append(tool_call(call_id, block.get("name"), block.get(args_key)))
        else:
            problems.add(
                f"{path}[{j}]",
                f"is a content block of type {block.get('type')!r}, which this reader does not know: "
                "expected text, a tool call, reasoning or media",
            )
    return "\n".join(texts), calls


def _tool_message(fields: dict[str, Any], path: str, problems: Problems) -> dict[str, Any]:
    content = fields.get("content")
    if isinstance(content, list) and all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content
    ):
        content, _ = _content(content, f"{path}.content", problems)
    message = {"role": "tool", "tool_call_id": fields.get("tool_call_id"), "content": result_text(content)}
    if fields.get("status") == "error":
        message["is_error"] = True
    return message
