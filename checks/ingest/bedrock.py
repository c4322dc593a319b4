"""Amazon Bedrock Converse messages, as Strands agents keep them too (`?format=bedrock`).

A Converse request (or a Strands agent's `agent.messages`), with the response's message
when sent along, under the native header::

    {"external_id": "…", "modelId": "…", "system": [{"text": "…"}],
     "toolConfig": {"tools": [{"toolSpec": {"name": "…", "inputSchema": {"json": {…}}}}]},
     "messages": [{"role": "user" | "assistant", "content": [blocks]}],
     "output": {"message": {"role": "assistant", "content": [blocks]}}}

`tools` may list the tool specs directly (`[{"name", "inputSchema": {"json"}}]`, as
Strands' registry gives them). Content blocks are keyed by what they hold, not typed:

- `{"text"}` is text (an assistant's texts joined by newlines are its answer), and so is
  the text of `guardContent` and of `citationsContent`;
- `{"toolUse": {"toolUseId", "name", "input"}}` is the assistant's tool call (`input` as
  compact JSON, keys in the order received);
- `{"toolResult": {"toolUseId", "content": [{"json"} | {"text"}], "status"}}` is one tool
  message, placed before the user's own words beside it: a lone `json` part is the result
  as compact JSON, several parts are joined by newlines; `status: "error"` is a failed call;
- reasoning, images, documents, video and cache points carry no transcript text and are
  skipped.

A block this reader does not know is refused (400) with its path, and so is a transcript
whose assistant says nothing readable: a Converse payload read as plain messages used to
be stored with an empty answer and no tool calls.
"""

from __future__ import annotations

from typing import Any

from .common import Problems, header, offered_tool, require_assistant, result_text, tool_call, with_turns

# The keys a content block may be written with, each a block of its own kind.
TEXT = "text"
SKIPPED = frozenset({"reasoningContent", "image", "document", "video", "audio", "cachePoint", "searchResult"})
BLOCKS = frozenset({TEXT, "toolUse", "toolResult", "guardContent", "citationsContent", *SKIPPED})
RESULT_PARTS = frozenset({"json", "text", "image", "document", "video", "searchResult"})


def adapt(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return payload
    native = header(payload)
    if isinstance(payload.get("modelId"), str) and not (native.get("agent") or {}).get("model"):
        agent = native.get("agent")
        if agent is None or isinstance(agent, dict):
            native["agent"] = {**(agent or {}), "model": payload["modelId"]}
    problems = Problems()
    if isinstance(payload.get("system"), list):
        native["system"] = "\n".join(_texts(payload["system"], "$.system", problems))
    messages = payload.get("messages")
    if isinstance(messages, list):
        messages = [
            out for i, raw in enumerate(messages) for out in to_messages(raw, f"$.messages[{i}]", problems)
        ]
        reply = _reply(payload)
        if reply is not None:
            messages += to_messages(reply, "$.output.message", problems)
        require_assistant(messages, "$.messages", problems)
    problems.raise_any()
    return with_turns(native, messages, tools_offered(payload))


def is_converse(payload: dict[str, Any], messages: list[Any]) -> bool:
    """Whether a payload is Converse's: a `toolConfig`, a response's `output.message`, or a
    message whose content holds an untyped block keyed by one of Converse's block names."""
    if isinstance(payload.get("toolConfig"), dict) or _reply(payload) is not None:
        return True
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(block, dict) and "type" not in block and BLOCKS.intersection(block)
            for block in content
        ):
            return True
    return False


def _reply(payload: dict[str, Any]) -> Any:
    output = payload.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict):
        return output["message"]
    return None


def tools_offered(payload: dict[str, Any]) -> list[Any] | None:
    config = payload.get("toolConfig")
    tools = config.get("tools") if isinstance(config, dict) else payload.get("tools")
    if not isinstance(tools, list):
        return None
    out: list[Any] = []
    for tool in tools:
        spec = tool.get("toolSpec", tool) if isinstance(tool, dict) else tool
        if not isinstance(spec, dict):
            out.append(spec)  # validation names it
            continue
        schema = spec.get("inputSchema")
        out.append(offered_tool(spec.get("name"), schema.get("json") if isinstance(schema, dict) else None))
    return out


def to_messages(raw: Any, path: str, problems: Problems) -> list[Any]:
    """One Converse message as native messages: tool results first, then the text, if any."""
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return [raw]  # a string content is already native; anything else, validation names
    role, blocks = raw.get("role"), raw["content"]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        where = f"{path}.content[{j}]"
        key = _kind(block, where, problems)
        if key is None or key in SKIPPED:
            continue
        value = block[key]
        if key == "toolUse" and isinstance(value, dict):
            calls.append(tool_call(value.get("toolUseId"), value.get("name"), value.get("input")))
        elif key == "toolResult" and isinstance(value, dict):
            results.append(_tool_message(value, f"{where}.toolResult", problems))
        elif key in ("toolUse", "toolResult"):
            problems.add(f"{where}.{key}", "must be an object")
        else:
            texts += _texts([block], where, problems, listed=False)
    if calls and role != "assistant":
        problems.add(f"{path}.content", "holds a toolUse block, which only an assistant message may make")
    if role == "assistant":
        message: dict[str, Any] = {"role": role, "content": "\n".join(texts) or None}
        if calls:
            message["tool_calls"] = calls
        return [*results, message] if results else [message]
    if results and not texts:
        return results
    return [*results, {"role": role, "content": "\n".join(texts)}]


def _kind(block: Any, path: str, problems: Problems) -> str | None:
    """The one key a block is written with, or None (and a problem) for what is not a block."""
    keys = [key for key in block if key in BLOCKS] if isinstance(block, dict) else []
    if len(keys) == 1:
        return keys[0]
    problems.add(
        path,
        "is not a Converse content block this reader knows: expected one of text, toolUse, "
        "toolResult, guardContent, citationsContent, reasoningContent, image, document, video, cachePoint",
    )
    return None


def _texts(blocks: list[Any], path: str, problems: Problems, *, listed: bool = True) -> list[str]:
    """The text of text, guard and citation blocks (system blocks and message blocks alike)."""
    out: list[str] = []
    for j, block in enumerate(blocks):
        where = f"{path}[{j}]" if listed else path
        key = _kind(block, where, problems)
        value = block.get(key) if key else None
        if key == TEXT and isinstance(value, str):
            out.append(value)
        elif key == "guardContent" and isinstance(value, dict) and isinstance(value.get("text"), dict):
            out.append(str(value["text"].get("text", "")))
        elif key == "citationsContent" and isinstance(value, dict) and isinstance(value.get("content"), list):
            out += [
                str(part["text"]) for part in value["content"] if isinstance(part, dict) and "text" in part
            ]
        elif key is not None and key not in SKIPPED:
            problems.add(f"{where}.{key}", "is not text this reader can take here")
    return out


def _tool_message(result: dict[str, Any], path: str, problems: Problems) -> dict[str, Any]:
    content = result.get("content")
    parts: list[Any] = []
    if isinstance(content, list):
        for j, part in enumerate(content):
            keys = [key for key in part if key in RESULT_PARTS] if isinstance(part, dict) else []
            if len(keys) != 1:
                problems.add(
                    f"{path}.content[{j}]", "must be one of {json}, {text}, {image}, {document}, {video}"
                )
            elif keys[0] in ("json", "text"):
                parts.append(part[keys[0]])
    else:
        problems.add(f"{path}.content", "must be a list of {json} or {text} parts")
    if len(parts) == 1:
        text = result_text(parts[0])
    else:
        text = "\n".join(str(result_text(part)) for part in parts)
    message = {"role": "tool", "tool_call_id": result.get("toolUseId"), "content": text}
    if result.get("status") == "error":
        message["is_error"] = True
    return message
