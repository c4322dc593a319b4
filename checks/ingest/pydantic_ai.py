"""pydantic-ai message history (`?format=pydantic-ai`).

A run's messages as pydantic-ai serializes them (`result.all_messages_json()`, or
`ModelMessagesTypeAdapter.dump_python(messages, mode="json")`), under the native header::

    {"external_id": "…", "system": "…",
     "tools": [{"name": "…", "parameters_json_schema": {…}}],
     "messages": [{"kind": "request", "parts": […]}, {"kind": "response", "parts": […]}, …]}

`tools` takes pydantic-ai's tool definitions (`parameters_json_schema`) or OpenAI function
tools. Each part reads by its `part_kind`:

- a request's `system-prompt` is a system message and `user-prompt` a user message (its
  strings and text content joined by newlines; images, audio, documents and files carry no
  transcript text); `tool-return` answers `tool_call_id`, its content as stored (an object
  as compact JSON), and any `outcome` but `success` (failed, denied, retried…) makes it a
  failed call; `retry-prompt` naming a tool answers that call as a failed one, and one
  naming none (like `retry-feedback`) is a system message, the framework's words, not a
  person's; the first request's instructions (`instruction` parts, else `instructions`)
  are the system prompt;
- a response is one assistant message: its `text` parts joined by newlines, its
  `tool-call` parts its calls (`args` an object or a JSON string, kept as written), and a
  spoken reply's transcript (`speech`) as text;
- what carries no transcript text is skipped: thinking, compaction, files the model made,
  the provider's built-in tools (`builtin-tool-call` / `-return`) and the framework's
  bookkeeping (instruction deltas, digests, tool availability, settings).

A message `kind` or `part_kind` this reader does not know is refused (400) with its path,
and so is a history whose responses say nothing readable.
"""

from __future__ import annotations

from typing import Any

from . import openai
from .common import (
    Problems,
    header,
    name_of,
    offered_tool,
    require_assistant,
    result_text,
    tool_call,
    with_turns,
)

SKIPPED_PARTS = frozenset(
    {
        "thinking",
        "compaction",
        "file",
        "builtin-tool-call",
        "builtin-tool-return",
        "instruction-delta",
        "instruction-digest",
        "instruction-baseline",
        "tool-availability-delta",
        "capability-load-delta",
        "model-settings-delta",
    }
)
# User content items with no transcript text (the `kind` of each).
MEDIA = frozenset(
    {"image-url", "audio-url", "video-url", "document-url", "binary", "cache-point", "uploaded-file"}
)
TEXT_CONTENT = ("text-content", "structured-content")


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    history = payload.get("messages")
    if not isinstance(history, list):
        return with_turns(native, history, None)
    problems = Problems()
    messages: list[Any] = []
    for i, raw in enumerate(history):
        messages += to_messages(raw, f"$.messages[{i}]", problems)
    require_assistant(messages, "$.messages", problems)
    problems.raise_any()
    if "system" not in native and (instructions := _instructions(history)):
        native["system"] = instructions
    agent = native.get("agent")
    model = _model_name(history)
    if model and (agent is None or (isinstance(agent, dict) and not agent.get("model"))):
        native["agent"] = {**(agent or {}), "model": model}
    return with_turns(native, messages, tools_offered(payload.get("tools")))


def is_history(messages: list[Any]) -> bool:
    """Whether a `messages` list is pydantic-ai's: messages of `kind` request or response with `parts`."""
    return any(
        isinstance(m, dict) and m.get("kind") in ("request", "response") and isinstance(m.get("parts"), list)
        for m in messages
    )


def tools_offered(tools: Any) -> list[Any] | None:
    if not isinstance(tools, list):
        return None
    if all(isinstance(t, dict) and "parameters_json_schema" in t for t in tools):
        return [offered_tool(t.get("name"), t.get("parameters_json_schema")) for t in tools]
    return openai.tools_offered(tools)


def to_messages(raw: Any, path: str, problems: Problems) -> list[Any]:
    if not isinstance(raw, dict):
        return [raw]  # validation names it
    parts = raw.get("parts")
    if not isinstance(parts, list):
        problems.add(f"{path}.parts", "must be a list of parts")
        return []
    kind = raw.get("kind")
    if kind == "request":
        return _request(parts, f"{path}.parts", problems)
    if kind == "response":
        return [_response(parts, f"{path}.parts", problems)]
    problems.add(f"{path}.kind", "must be request or response (a ModelRequest or ModelResponse)")
    return []


def _request(parts: list[Any], path: str, problems: Problems) -> list[Any]:
    out: list[Any] = []
    for j, part in enumerate(parts):
        where = f"{path}[{j}]"
        if not isinstance(part, dict):
            problems.add(where, "must be a part object with a part_kind")
            continue
        kind = name_of(part.get("part_kind"))
        if kind in SKIPPED_PARTS or kind == "instruction":
            continue  # instructions are the system prompt (see _instructions)
        if kind == "system-prompt":
            out.append(
                {"role": "system", "content": _text(part.get("content"), f"{where}.content", problems)}
            )
        elif kind == "user-prompt":
            out.append({"role": "user", "content": _text(part.get("content"), f"{where}.content", problems)})
        elif kind == "tool-return":
            outcome = part.get("outcome", "success")
            out.append(_tool_message(part, failed=outcome not in (None, "success")))
        elif kind in ("retry-prompt", "retry-feedback"):
            if kind == "retry-prompt" and part.get("tool_name"):
                out.append(_tool_message(part, failed=True))
            else:
                out.append({"role": "system", "content": result_text(part.get("content"))})
        else:
            problems.add(
                where, f"is a request part of kind {part.get('part_kind')!r}, which this reader does not know"
            )
    return out


def _response(parts: list[Any], path: str, problems: Problems) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            problems.add(f"{path}[{j}]", "must be a part object with a part_kind")
            continue
        kind = name_of(part.get("part_kind"))
        if kind in SKIPPED_PARTS:
            continue
        if kind == "text":
            if isinstance(part.get("content"), str):
                texts.append(part["content"])
            else:
                problems.add(f"{path}[{j}].content", "must be a string")
        elif kind == "tool-call":
            calls.append(tool_call(part.get("tool_call_id"), part.get("tool_name"), part.get("args")))
        elif kind == "speech":
            if part.get("speaker", "assistant") == "assistant" and isinstance(part.get("transcript"), str):
                texts.append(part["transcript"])
        else:
            problems.add(
                f"{path}[{j}]",
                f"is a response part of kind {part.get('part_kind')!r}, which this reader does not know",
            )
    message: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_message(part: dict[str, Any], *, failed: bool) -> dict[str, Any]:
    message = {
        "role": "tool",
        "tool_call_id": part.get("tool_call_id"),
        "content": result_text(part.get("content")),
    }
    if failed:
        message["is_error"] = True
    return message


def _text(content: Any, path: str, problems: Problems) -> Any:
    """A prompt's text: a string as is, a list's strings and text content joined by newlines."""
    if not isinstance(content, list):
        return content  # a string, or what validation names
    texts: list[str] = []
    for j, item in enumerate(content):
        if isinstance(item, str):
            texts.append(item)
        elif (
            isinstance(item, dict)
            and item.get("kind") in TEXT_CONTENT
            and isinstance(item.get("content"), str)
        ):
            texts.append(item["content"])
        elif not (isinstance(item, dict) and name_of(item.get("kind")) in MEDIA):
            kind = item.get("kind") if isinstance(item, dict) else None
            problems.add(f"{path}[{j}]", f"is user content of kind {kind!r}, which this reader does not know")
    return "\n".join(texts)


def _instructions(history: list[Any]) -> str:
    """The instructions of the first request that has any: the run's system prompt."""
    for raw in history:
        if not isinstance(raw, dict) or raw.get("kind") != "request":
            continue
        parts = raw["parts"] if isinstance(raw.get("parts"), list) else []
        given = [
            p["content"]
            for p in parts
            if isinstance(p, dict)
            and p.get("part_kind") == "instruction"
            and isinstance(p.get("content"), str)
        ]
        if given:
            return "\n\n".join(given)
        if isinstance(raw.get("instructions"), str) and raw["instructions"]:
            return str(raw["instructions"])
    return ""


def _model_name(history: list[Any]) -> str:
    for raw in history:
        if isinstance(raw, dict) and raw.get("kind") == "response" and isinstance(raw.get("model_name"), str):
            return str(raw["model_name"])
    return ""
