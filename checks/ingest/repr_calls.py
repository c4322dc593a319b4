"""Tool calls written as a Python repr inside a text part, read back as tool calls.

Some producers record an assistant message by ``str()``-ing the SDK's objects, so the text
holds ``[ChatCompletionMessageToolCall(id='call_1', function=Function(arguments='{…}',
name='lookup'), type='function')]``, ``ResponseFunctionToolCall(…)``, ``ToolUseBlock(…)``
or a list of dicts. ``calls_in_text`` reads such text with ``ast`` (parsed, never run:
only literals and calls with keyword arguments are read) and answers the calls and any
text blocks beside them, or None when the text is anything else.
"""

from __future__ import annotations

import ast
from typing import Any

MAX_LENGTH = 200_000  # longer text is not parsed: it is prose, or too large to be one message
_NOT_LITERAL = object()


def calls_in_text(text: str) -> tuple[list[dict[str, Any]], list[str]] | None:
    """(tool-call parts, texts) when the whole text is a repr of tool calls (and text
    blocks); None otherwise."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_LENGTH or stripped[0] not in "[{(" and "(" not in stripped[:80]:
        return None
    try:
        tree = ast.parse(stripped, mode="eval")
        value = _literal(tree.body)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    items = value if isinstance(value, list) else [value]
    calls: list[dict[str, Any]] = []
    texts: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        call = _call(item)
        if call is not None:
            calls.append(call)
        elif isinstance(item.get("text"), str) and item.get("type", "text") in ("text", "output_text"):
            texts.append(item["text"])
        else:
            return None
    return (calls, texts) if calls else None


def _literal(node: ast.AST) -> Any:
    """A literal, list, tuple or dict as its value; a call with keyword arguments as the
    dict of them; anything else refused with ValueError."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise ValueError("a ** inside a dict is not a literal")
            out[_literal(key)] = _literal(value)
        return out
    if (
        isinstance(node, ast.Call)
        and node.keywords
        and not node.args
        and isinstance(node.func, (ast.Name, ast.Attribute))
    ):
        return {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg is not None}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _literal(node.operand)
        if isinstance(operand, (int, float)):
            return -operand
    raise ValueError("not a literal")


def _call(item: dict[str, Any]) -> dict[str, Any] | None:
    """One repr'd object as a tool-call part, when it is one."""
    function = item.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return _part(item.get("id"), function["name"], function.get("arguments"))
    kind = item.get("type")
    if kind == "function_call" and isinstance(item.get("name"), str):
        return _part(item.get("call_id") or item.get("id"), item["name"], item.get("arguments"))
    if kind == "tool_use" and isinstance(item.get("name"), str):
        return _part(item.get("id"), item["name"], item.get("input"))
    use = item.get("toolUse")
    if isinstance(use, dict) and isinstance(use.get("name"), str):
        return _part(use.get("toolUseId"), use["name"], use.get("input"))
    if isinstance(item.get("name"), str) and "args" in item and kind in (None, "tool_call"):
        return _part(item.get("id"), item["name"], item["args"])  # LangChain's tool_calls
    return None


def _part(call_id: Any, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
