"""Message content as instrumentations record it, read into GenAI semantic-convention parts.

Span events and log records carry a message's content as its SDK wrote it: plain text, a
list of OpenAI parts (``{"type": "text", "text": …}``), Bedrock/Strands blocks
(``{"text": …}``, ``{"toolUse": …}``, ``{"toolResult": …}``), Anthropic blocks
(``tool_use``, ``tool_result``), Responses items (``function_call``,
``function_call_output``), or any of these as JSON text. ``parts`` reads all of them into
the parts ``otel.semconv_message`` reads (``text``, ``tool_call``, ``tool_call_response``),
so every convention ends in one reading of messages.
"""

from __future__ import annotations

from typing import Any

from .common import result_text
from .flat_attributes import json_value

Part = dict[str, Any]

TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def parts(content: Any) -> list[Part]:
    """The parts of a message's content; JSON text holding blocks is read as the blocks, and
    any other text (JSON or not) is one text part."""
    if isinstance(content, str):
        decoded = json_value(content)
        if isinstance(decoded, list) and decoded and all(_block(b) is not None for b in decoded):
            return [p for b in decoded for p in _block(b) or ()]
        if isinstance(decoded, dict) and _block(decoded):
            return _block(decoded) or []
        return [{"type": "text", "content": content}] if content else []
    if isinstance(content, list):
        return [p for b in content for p in _block(b) or ()]
    if isinstance(content, dict):
        return _block(content) or []
    return []


def _block(block: Any) -> list[Part] | None:
    """One block as parts ([] for a block that holds nothing read here, such as an image);
    None for what is not a content block at all."""
    if isinstance(block, str):
        return [{"type": "text", "content": block}]
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in TEXT_TYPES or (kind is None and isinstance(block.get("text"), str)):
        text = block.get("text", block.get("content"))
        return [{"type": "text", "content": text}] if isinstance(text, str) else []
    if kind in ("tool_call", "tool_call_response"):
        return [block]
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        return [_call(use.get("toolUseId"), use.get("name"), use.get("input"))]
    if isinstance(block.get("toolResult"), dict):
        result = block["toolResult"]
        return [_response(result.get("toolUseId"), result.get("content"), result.get("status") == "error")]
    if kind == "tool_use":
        return [_call(block.get("id"), block.get("name"), block.get("input"))]
    if kind == "tool_result":
        return [_response(block.get("tool_use_id"), block.get("content"), block.get("is_error") is True)]
    if kind == "function_call":
        # The Responses API names a call twice: its item id (fc_…) and the call_id its output
        # answers; the call_id is what pairs them.
        return [_call(block.get("call_id") or block.get("id"), block.get("name"), block.get("arguments"))]
    if kind == "function_call_output":
        return [_response(block.get("call_id"), block.get("output"), False)]
    if kind is not None or any(key in block for key in ("image", "document", "reasoningContent", "json")):
        return []  # images, documents, reasoning: nothing the checks read
    return None


def _call(call_id: Any, name: Any, arguments: Any) -> Part:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def _response(call_id: Any, content: Any, error: bool) -> Part:
    part: Part = {"type": "tool_call_response", "id": call_id, "response": result_of(content)}
    if error:
        part["is_error"] = True
    return part


def result_of(content: Any) -> Any:
    """A tool result's content as text: a list of content blocks (``{"text": …}``,
    ``{"type": "text", "text": …}``, ``{"json": …}``) as its texts joined, JSON blocks as
    compact JSON; anything else as ``result_text`` writes it (data whose objects merely
    have a ``text`` key among others stays JSON)."""
    if isinstance(content, list) and content and all(_result_block(b) for b in content):
        return "\n".join(b["text"] if "text" in b else str(result_text(b["json"])) for b in content)
    return result_text(content)


def _result_block(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    if set(block) == {"json"}:
        return True
    return (
        set(block) <= {"text", "type"}
        and isinstance(block.get("text"), str)
        and block.get("type", "text") == "text"
    )
